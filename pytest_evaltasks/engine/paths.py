"""How records name paths: the same in every clone and on every machine.

A path inside the project's root is written relative to it (`tasks/data/x.json`), elsewhere in
its checkout relative to the root too (`../libs/x.py`); a folder that differs between machines
is written by the variable that places it (`~`, `$TMPDIR`, `$XDG_CACHE_HOME`, `$HF_HOME`,
`$PYTHON_PREFIX`, `$PYTHON_BASE_PREFIX`, `$SITE_PACKAGES`), the deepest first, and inside a
longer string the root is `$ROOT`. Identities (`snapshot.identity`), the `[task]` header and
other harnesses' records all name paths through here. Format 3 named only paths inside the
root (`format_3_paths`), kept to verify files in that format.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import re
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

_FORMAT_3: contextvars.ContextVar[bool] = contextvars.ContextVar("format_3", default=False)
"""Whether paths are named as format 3 named them (`format_3_paths`)."""


@contextlib.contextmanager
def format_3_paths() -> Iterator[None]:
    """Paths named as format 3 named them, to verify a file in that format: only those inside
    the root relative to it, the rest as written."""
    token = _FORMAT_3.set(True)
    try:
        yield
    finally:
        _FORMAT_3.reset(token)


def relative_path_text(text: str, root: Path | None) -> str:
    """An absolute path as a record names it, the same in every clone and on every machine:
    inside `root` as a POSIX path relative to it (`hf_data_files` built from `__file__`),
    elsewhere in the project's checkout relative to `root` too (`../shared/data.json`), under
    the home or temporary folder as `~/...` or `$TMPDIR/...` (named as machine-dependent);
    any other string unchanged."""
    if root is None or not _looks_absolute(text):
        return text
    return path_text(text, absolute(root), project_of(root))


def path_text(text: str, root: Path, project: str | None) -> str:
    """`relative_path_text` for a known project folder; None: as format 3 named paths (only
    those inside `root`, relative)."""
    if project is not None:
        machine = _machine_folder_of(text)
        if machine is not None and not _holds_root(machine[1], root):
            return _machine_path(text)  # a machine folder inside the root: a cache, a venv
    inside = in_root(text, root)
    if inside is not None:
        return inside
    if project is None:
        return text
    beside = in_project(text, root, project)
    if beside is not None:
        return beside
    return _machine_path(text)


def in_root(text: str, root: Path) -> str | None:
    """`text` relative to `root` (POSIX; `.` for root itself) when it names a path inside it,
    written under root or reaching it through a symlink."""
    for base in root_forms(root):
        if text == base:
            return "."
        if text.startswith(base) and text[len(base)] in SEPARATORS:
            return text[len(base) + 1 :].replace(os.sep, "/") or "."
    relative = _real_relative(text, root_forms(root)[-1])
    return None if relative is None or relative.split("/")[0] == os.pardir else relative


def in_project(text: str, root: Path, project: str) -> str | None:
    """`text` relative to `root` (`../libs/x.py`) when the project's checkout holds it, as
    written or resolved."""
    resolved_root = root_forms(root)[-1]
    for form in (os.path.normpath(text), _resolved(text)):
        if form is not None and form.startswith(project + os.sep):
            return os.path.relpath(form, resolved_root).replace(os.sep, "/")
    return None


def _real_relative(text: str, base: str) -> str | None:
    """`text`, resolved, relative to the resolved folder `base` (POSIX), if it exists."""
    resolved = _resolved(text)
    if resolved is None:
        return None
    try:
        return os.path.relpath(resolved, base).replace(os.sep, "/")
    except ValueError:  # another drive
        return None


def _resolved(text: str) -> str | None:
    """An existing path with its symlinks resolved; None for anything else."""
    if len(text) > 4096 or "\n" in text or "\0" in text:
        return None
    try:
        return os.path.realpath(text) if os.path.exists(text) else None
    except (OSError, ValueError):
        return None


def _machine_path(text: str) -> str:
    """A path under a machine folder (`MACHINE_FOLDERS`), named by the variable that places
    it, the deepest folder first; any other path as written."""
    found = _machine_folder_of(text)
    if found is None:
        return text
    variable, base = found
    return variable + text[len(base) :].replace(os.sep, "/")


def machine_text(text: str, root: Path | None = None) -> str:
    """`text` with every machine folder it names, anywhere in it (`--cache=/home/u/.cache/x`),
    written by its variable, and the project's root as `$ROOT`: what an identity records of a
    string, the same on every machine. Prompt text is never passed here."""
    if os.sep not in text:
        return text
    folders = list(_machine_folders())
    if root is not None:
        folders += [(ROOT_VARIABLE, form) for form in root_forms(absolute(root))]
    pattern = _folders_pattern(tuple(sorted(folders, key=lambda item: -len(item[1]))))
    if pattern is None:
        return text
    by_folder = {folder: variable for variable, folder in folders}
    return pattern.sub(lambda match: by_folder[match.group(1)], text)


ROOT_VARIABLE = "$ROOT"
"""How `machine_text` names the project's root inside a longer string."""


@functools.lru_cache(maxsize=16)
def _folders_pattern(folders: tuple[tuple[str, str], ...]) -> re.Pattern[str] | None:
    """A pattern matching any of `folders` (deepest first) where a path starts: not inside a
    name (`/var/tmp` is not `/tmp`), and followed by a separator or the end of the path."""
    if not folders:
        return None
    choices = "|".join(re.escape(folder) for _, folder in folders)
    return re.compile(rf"(?<![\w.\-])({choices})(?=[/\\]|$|[^\w.\-])")


def _machine_folder_of(text: str) -> tuple[str, str] | None:
    """The deepest machine folder holding the path `text`: (variable, folder), or None."""
    for variable, base in _machine_folders():
        if text.startswith(base) and (len(text) == len(base) or text[len(base)] in SEPARATORS):
            return variable, base
    return None


def _holds_root(folder: str, root: Path) -> bool:
    """Whether the machine folder `folder` is the root or holds it (the root is then the
    deeper of the two, and names the paths inside it)."""
    for form in root_forms(absolute(root)):
        if form == folder or form.startswith(folder.rstrip(os.sep) + os.sep):
            return True
    return False


MACHINE_FOLDERS = (
    "~",
    "$TMPDIR",
    "$XDG_CACHE_HOME",
    "$HF_HOME",
    "$PYTHON_PREFIX",
    "$PYTHON_BASE_PREFIX",
    "$SITE_PACKAGES",
)
"""How records name the folders that differ between machines: the home folder, the temporary
folder, the cache folders (`~/.cache`, Hugging Face's), the interpreter's prefix (a venv) and
base prefix, and the installed packages' folders."""


def _machine_folders() -> tuple[tuple[str, str], ...]:
    """(variable, folder) for every machine folder, as written and resolved, the deepest first
    (a temporary folder inside the home folder is named as temporary)."""
    return _machine_folders_for(
        os.path.expanduser("~"),
        tempfile.gettempdir(),
        os.environ.get("XDG_CACHE_HOME", ""),
        os.environ.get("HF_HOME", ""),
    )


@functools.lru_cache(maxsize=16)
def _machine_folders_for(
    home: str, temporary: str, xdg_cache: str, hf_home: str
) -> tuple[tuple[str, str], ...]:
    """`_machine_folders` for the values the environment gives them."""
    cache = xdg_cache or os.path.join(home, ".cache")
    candidates = [
        ("~", home),
        ("$TMPDIR", temporary),
        ("$XDG_CACHE_HOME", cache),
        ("$HF_HOME", hf_home or os.path.join(cache, "huggingface")),
        ("$PYTHON_PREFIX", sys.prefix),
        ("$PYTHON_BASE_PREFIX", sys.base_prefix),
        *(("$SITE_PACKAGES", folder) for folder in _site_packages()),
    ]
    found: dict[str, str] = {}
    for variable, folder in candidates:
        if not folder or not os.path.isabs(folder):
            continue
        for form in (os.path.normpath(folder), os.path.realpath(folder)):
            if form != os.sep:
                found.setdefault(form, variable)
    return tuple(sorted(((v, f) for f, v in found.items()), key=lambda item: -len(item[1])))


def _site_packages() -> list[str]:
    """The folders installed packages live in (this interpreter's, the user's)."""
    import site

    folders = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    with contextlib.suppress(AttributeError):
        folders.update(site.getsitepackages())
    with contextlib.suppress(AttributeError):
        folders.add(site.getusersitepackages())
    return sorted(folders)


def absolute(root: Path) -> Path:
    """`root` made absolute (as written: links are not resolved)."""
    return root if root.is_absolute() else Path(os.path.abspath(root))


def project_of(root: Path) -> str | None:
    """The resolved folder of the checkout holding `root` (else `root`), or None while format
    3 identities are asked for."""
    return None if _FORMAT_3.get() else _project_folder(absolute(root))


@functools.lru_cache(maxsize=64)
def _project_folder(root: Path) -> str:
    """`_project`, found once per root in a process (a few file checks up the tree)."""
    from .checkout import project_folder

    return os.path.realpath(project_folder(root))


SEPARATORS = frozenset({os.sep, os.altsep or os.sep})


def _looks_absolute(text: str) -> bool:
    """Cheap pre-check before `os.path.isabs`: most strings are prompts, not paths."""
    return bool(text) and (text[0] in SEPARATORS or text[1:2] == ":") and os.path.isabs(text)


@functools.lru_cache(maxsize=64)
def root_forms(root: Path) -> tuple[str, ...]:
    """`root` as written (made absolute) and with its symlinks resolved; the resolved last."""
    lexical = os.path.normpath(os.path.abspath(root))
    resolved = os.path.realpath(lexical)
    return (lexical,) if lexical == resolved else (lexical, resolved)


def in_format_3() -> bool:
    """Whether names are being made as format 3 made them (`format_3_paths`)."""
    return _FORMAT_3.get()
