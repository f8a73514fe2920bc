"""What a task's code reads: the modules it imports and the files it opens, observed as it runs.

A changed-only run must select a task whenever anything it reads changed. The syntax of its
imports is not enough: a prompt function imports helpers when it is called, a module uses
`importlib.import_module` or `__import__(name, fromlist=...)`, reads a `template.json` at import
or at call time, and `conftest.py` may have imported a helper before any recording began.
So three things are observed:

- every call of `builtins.__import__` and `importlib.import_module` while a recorder is active
  (cached modules included: the statement runs, so it is seen);
- every file opened (SQLite databases included) and every folder listed in the process once
  this module is first used (an audit hook; the import system's own listings aside),
  attributed to the project file whose code did it (the innermost frame of a project file),
  and, while a recorder is active, to the recorder too: a file added to a listed folder
  changes what the code sees;
- the import statements of every project module reached (read from its source), which covers
  modules that were loaded before recording began.

The same hook notes the connections the process opens (SQLite databases, sockets), which a
forked process must not share (`connections`).

`inputs_of` turns these into the project files a task reads (what a snapshot records and a
changed-only run compares), `reach_of` also into what the code reached outside the project (what
the machine-local module index must see change). All of it is an over-approximation
by design: a file that might be read counts as read.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import importlib
import importlib.util
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

_INSTALLED = frozenset({"site-packages", "dist-packages"})
_project_hint: str | None = None
"""The project's folder, once a run knows it (`set_project`)."""


def set_project(folder: Path) -> None:
    """Tell the observer the project's folder: a folder of the name `site-packages` above it
    (a clone may sit under one) does not make the project's files installed ones."""
    global _project_hint
    _project_hint = os.path.abspath(folder)


def installed_file(path: str, project: str | None = None) -> bool:
    """A file of an installed package: under a folder named `site-packages` or `dist-packages`,
    counted below the project's folder for a file inside it (a clone under a folder of that
    name, or whose name merely holds it, is still the project)."""
    project = project or _project_hint
    if project is not None:
        base = project.rstrip(os.sep)
        if path == base or path.startswith(base + os.sep):
            path = path[len(base) :]
    return not _INSTALLED.isdisjoint(path.split(os.sep))


_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])
"""This package's own folder: its code reads data for a task, but is not the task's code."""

_lock = threading.Lock()
_active: list[InputRecorder] = []
_opened_by: dict[str, set[str]] = {}
"""Code file -> files its code opened, for the whole process since the hook was installed."""
_attributed = 0
"""How many (code file, file) pairs `_opened_by` holds: what a result derived from it is
valid for (`attributed`)."""
_hook_installed = False
_original_import: Any = None
_original_import_module: Any = None


def install() -> None:
    """Start observing file opens for the rest of the process (an audit hook cannot be removed;
    it costs a string check per open when no recorder is active)."""
    global _hook_installed
    with _lock:
        if not _hook_installed:
            sys.addaudithook(_audit)
            _hook_installed = True


_LISTINGS = frozenset({"os.listdir", "os.scandir"})
"""Audit events of a folder being listed (`glob`, `pathlib`'s `glob` and `iterdir` and
`os.walk` list through them): a file added to a listed folder changes what the code sees,
though no file it opened changed."""


_suspended = threading.local()


@contextlib.contextmanager
def unrecorded() -> Iterator[None]:
    """This package's own bookkeeping in the block (finding the git checkout) is not read for
    any task: nothing it opens, lists or starts counts."""
    depth = getattr(_suspended, "depth", 0)
    _suspended.depth = depth + 1
    try:
        yield
    finally:
        _suspended.depth = depth


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event not in _WATCHED:
        return  # the usual case, one set lookup: every `id()` and `compile` is an audit event
    if getattr(_suspended, "depth", 0):
        return
    if event == "open":
        if args:
            if _listening:
                _heard(args[0])
            _opened(args[0])
    elif event in _LISTINGS:
        _listed(args[0] if args else None)
    elif event == "sqlite3.connect":
        connections.add("an SQLite connection")
        if args:
            _opened(_sqlite_file(args[0]))
    elif event == "socket.__new__":
        connections.add("a socket")
    elif event in _PROCESSES:
        _opened(UNSEEN, absolute=True)


_PROCESSES = frozenset(
    {"subprocess.Popen", "os.system", "os.posix_spawn", "os.spawn", "os.exec", "os.fork",
     "os.forkpty", "os.startfile"}
)  # fmt: skip
"""Audit events of the process starting another (a subprocess, a pool's worker, a fork):
what that process reads is never seen here."""

_WATCHED = frozenset({"open", "sqlite3.connect", "socket.__new__"}) | _LISTINGS | _PROCESSES
"""Every audit event the hook acts on."""

UNSEEN = "<another process: its reads are not seen>"
"""The input a task's code has when it started another process: not a file, but the mark
that what it read cannot be known (a changed-only run always checks such a task)."""

UNSEEN_REASONS = {UNSEEN: "its code started another process, whose reads are not seen"}
"""Why a task whose inputs hold a mark is checked by every changed-only run."""

DECLARED_INPUTS = "evaltasks_inputs"
"""A module-level list of the files a module reads where no open is seen (a reader in native
code, such as pyarrow's behind `pandas.read_parquet`; another process): paths or globs relative
to it. Unseen, such a file is claimed by no task, so its change checks every task; declared, it
selects the tasks that read it."""


connections: set[str] = set()
"""The kinds of connection the process has opened since the hook was installed (SQLite
databases, sockets), open or closed since: a forked process must not share one with its parent
(`plugin.lookahead`), and the audit events say when one opens, not when it closes."""


_listening: list[list[str]] = []
"""The lists `files_opened` blocks collect into."""


@contextlib.contextmanager
def files_opened() -> Iterator[list[str]]:
    """Every file opened in this process while the block runs, in order, absolute and not
    filtered (installed files too): what a library read, for a caller that needs exactly that
    (lm-eval's YAML loader, whose includes live in lm-eval's installed folder)."""
    install()
    found: list[str] = []
    with _lock:
        _listening.append(found)
    try:
        yield found
    finally:
        with _lock:
            _listening.remove(found)


def _heard(path: Any) -> None:
    if isinstance(path, int) or path is None:
        return
    try:
        opened = os.path.abspath(os.fsdecode(path))
    except (TypeError, ValueError):
        return
    for found in _listening:
        found.append(opened)


def _sqlite_file(database: Any) -> Any:
    """The file an SQLite connection opens (its own C code opens it, unseen by "open"): a path,
    or a `file:` URI's path; None for an in-memory database."""
    if isinstance(database, bytes):
        database = os.fsdecode(database)
    if not isinstance(database, str):
        return database
    if database.startswith("file:"):
        database = database[len("file:") :].split("?", 1)[0]
    return None if database in ("", ":memory:") else database


def _opened(path: Any, absolute: bool = False) -> None:
    """A file opened: every active recorder's, and the innermost project code file's
    (`absolute`: `path` is kept as it is, as `UNSEEN` is)."""
    opened = path if absolute else _absolute_path(path)
    if opened is None:
        return
    for recorder in _active:
        recorder.files.add(opened)
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if _is_project_code(filename):
            _attribute(filename, opened)
            return
        frame = frame.f_back  # type: ignore[assignment]


def _attribute(filename: str, opened: str) -> None:
    """`opened` was opened (or listed) by the code of `filename`."""
    global _attributed
    known = _opened_by.setdefault(filename, set())
    if opened not in known:
        known.add(opened)
        _attributed += 1


def attributed() -> int:
    """A count that grows whenever project code is first seen opening a file: a result made
    from what code opened holds while it is unchanged."""
    return _attributed


def _listed(path: Any) -> None:
    """A folder listed on behalf of project code (directly, through the standard library, or
    through a library it called, such as a template loader's `list_templates`): recorded as the
    folder's path with a trailing separator, and attributed to that code file. Listings by the
    import system, or by this package's machinery (a task's data, a dependency of its own; a
    dataset loader resolving files it may skip when cached), are not the task's code looking."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith("<frozen importlib") or filename.startswith(_PACKAGE_DIR):
            return
        if _is_project_code(filename):
            break
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return
    listed = _absolute_path("." if path is None else path)
    if listed is None:
        return
    folder = os.path.join(listed, "")
    for recorder in _active:
        recorder.files.add(folder)
    _attribute(frame.f_code.co_filename, folder)


_excluded: tuple[str, ...] = ()
"""Folders (with a trailing separator) whose files are never inputs (`exclude_folder`)."""


def exclude_folder(folder: str) -> None:
    """Never count a file under `folder` as read: a cache of this package's own (a build's
    private `datasets` cache), wherever the temporary folder lies, inside a project too."""
    global _excluded
    forms = {os.path.join(os.path.abspath(folder), ""), os.path.join(os.path.realpath(folder), "")}
    _excluded = tuple(sorted({*_excluded, *forms}))


def _absolute_path(path: Any) -> str | None:
    """An audited path as an absolute one; None for a descriptor, an installed file, a
    bytecode cache or a file in an excluded folder."""
    if isinstance(path, int) or path is None:
        return None
    try:
        absolute = os.path.abspath(os.fsdecode(path))
    except (TypeError, ValueError):
        return None
    if installed_file(absolute) or "__pycache__" in absolute or absolute.startswith(_excluded):
        return None
    return absolute


def _is_project_code(filename: str) -> bool:
    """A code file of the project: not this package, an installed library or the interpreter."""
    return (
        filename.endswith(".py")
        and not filename.startswith(_PACKAGE_DIR)
        and not installed_file(filename)
        and os.path.isabs(filename)
        and not filename.startswith(sys.prefix)
        and not filename.startswith(sys.base_prefix)
    )


class InputRecorder:
    """Records, while active, every import call and every file opened (any thread's opens
    count: an over-approximation)."""

    def __init__(self, importer: str | None = None) -> None:
        self.importer = importer
        self.modules: set[str] = set()
        self.edges: dict[str, set[str]] = {}
        """Module name -> modules it imported (by the importing code's `__name__`)."""
        self.files: set[str] = set()
        self.failed: str | None = None

    def __enter__(self) -> InputRecorder:
        install()
        global _original_import, _original_import_module
        with _lock:
            if not _active:
                _original_import = builtins.__import__
                _original_import_module = importlib.import_module
                builtins.__import__ = _import  # type: ignore[assignment]
                importlib.import_module = _import_module
            _active.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        with _lock:
            _active.remove(self)
            if not _active:
                builtins.__import__ = _original_import
                importlib.import_module = _original_import_module

    def _seen(self, importer: str | None, target: str, fromlist: Any) -> None:
        self.modules.add(target)
        if importer:
            edges = self.edges.setdefault(importer, set())
            edges.add(target)
        for item in fromlist or ():
            if isinstance(item, str) and f"{target}.{item}" in sys.modules:
                self.modules.add(f"{target}.{item}")
                if importer:
                    self.edges[importer].add(f"{target}.{item}")


def _import(
    name: str,
    globals: dict[str, Any] | None = None,
    locals: Any = None,
    fromlist: Any = (),
    level: int = 0,
) -> Any:
    target = _absolute(name, globals, level)
    try:
        module = _original_import(name, globals, locals, fromlist, level)
    except ImportError:
        for recorder in _active:
            recorder.failed = recorder.failed or target
        raise
    importer = (globals or {}).get("__name__")
    for recorder in list(_active):
        recorder._seen(importer if isinstance(importer, str) else None, target, fromlist)
    return module


def _import_module(name: str, package: str | None = None) -> Any:
    module = _original_import_module(name, package)
    try:
        target = importlib.util.resolve_name(name, package) if name.startswith(".") else name
    except (ImportError, ValueError):
        target = name
    frame = sys._getframe(1)
    importer = frame.f_globals.get("__name__")
    for recorder in list(_active):
        recorder._seen(importer if isinstance(importer, str) else None, target, ())
    return module


def _absolute(name: str, globals: dict[str, Any] | None, level: int) -> str:
    """The absolute name of an import, relative ones resolved against the importer."""
    if level == 0:
        return name
    package = (globals or {}).get("__package__") or ""
    try:
        return importlib.util.resolve_name("." * level + name, package)
    except (ImportError, ValueError):
        return name


def module_file(name: str) -> str | None:
    """The source file of a module (a package's `__init__.py`), or None: a loaded module's
    file, else where importing it would find it (without importing it; only when its parent
    package, if any, is loaded, so that nothing is executed to find it)."""
    module = sys.modules.get(name)
    if module is not None:
        path = getattr(module, "__file__", None)
        return os.path.abspath(path) if isinstance(path, str) else None
    parent = name.rpartition(".")[0]
    if parent and parent not in sys.modules:
        return None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
    origin = getattr(spec, "origin", None)
    return os.path.abspath(origin) if isinstance(origin, str) and os.path.isfile(origin) else None


def _project(path: str, within: str) -> bool:
    """A file of the project: under `within`, not installed, not this package's own code."""
    return (
        (path == within or path.startswith(within.rstrip(os.sep) + os.sep))
        and not installed_file(path, within)
        and not path.startswith(_PACKAGE_DIR + os.sep)
    )


def inputs_of(
    modules: Iterable[str], files: Iterable[str], within: Path, follow_opened: bool = True
) -> set[str]:
    """The project files reached from `modules` (imported) and `files` (opened): every project
    module in their import closure, and (`follow_opened`) every file their code was seen to
    open or folder it listed in this process, at any time. Absolute paths; a folder's ends
    with a separator.

    Following what code opened makes a record complete when a read is cached (a prompt function
    that reads a file on its first call only, for a sibling task built earlier), at the price of
    over-approximating: what a module's code opened for one task counts for its others."""
    return reach_of(modules, files, within, outside=False, follow_opened=follow_opened).project


class Reach(NamedTuple):
    """Everything code reached: what a record of it must see change."""

    project: set[str]
    """Project files (see `inputs_of`)."""
    outside: set[str]
    """Code outside the project folder that is neither installed nor the standard library's:
    modules on `sys.path` from elsewhere (a sibling checkout, an editable install's sources),
    reached by an import and followed through theirs. Files opened outside the project are
    not kept: most are the interpreter's and libraries' own (`/proc`, `/dev/null`, temporary
    files, the zone database), which change from run to run or vanish, and would leave a
    module no record that holds."""
    installed: set[str]
    """The top-level entries (a package's folder or a module's file) of the installed packages
    reached: an install or an upgrade rewrites them. Not followed: a package's own imports are
    its installer's business."""


def reach_of(
    modules: Iterable[str],
    files: Iterable[str],
    within: Path,
    outside: bool = True,
    follow_opened: bool = True,
) -> Reach:
    """What code that imported `modules` and opened `files` reached, in and outside the
    project folder `within` (this package's own code and the standard library aside: the
    Python version stands for the one, and nothing of the other reads a task's files).

    Without `outside`, code outside the project is not followed: the project files are then
    those reached through project code alone, which is what snapshots record. Without
    `follow_opened`, only the files given count as opened (see `inputs_of`)."""
    base = str(within.resolve())
    stdlib = os.path.dirname(os.path.abspath(os.__file__)) + os.sep
    reach = Reach(set(), set(), set())
    stack = [(path, True) for name in modules if (path := module_file(name)) is not None]
    stack += [(path, False) for path in files]  # (a path, whether an import reached it)
    done: set[str] = set()
    while stack:
        path, imported = stack.pop()
        if path in done:
            continue
        if path in UNSEEN_REASONS:
            reach.project.add(path)
            done.add(path)
            continue
        place = _place(path, base, stdlib)
        if place == "outside" and not imported:
            continue  # a file opened outside the project is not kept (see `Reach.outside`)
        done.add(path)
        if place == "installed":
            reach.installed.add(_installed_top(path) or path)
        if place in ("installed", "other") or (place == "outside" and not outside):
            continue  # not followed
        (reach.project if place == "project" else reach.outside).add(path)
        if follow_opened:
            stack.extend((opened, False) for opened in _opened_by.get(path, ()))
        if path.endswith(".py"):
            names = static_imports(path, _package_of(path))
            stack.extend(
                (module_path, True)
                for name in names
                if (module_path := module_file(name)) is not None
            )
    return reach


def _place(path: str, base: str, stdlib: str) -> str:
    """Where a file is: `project` (under `base`), `installed`, `outside` (anywhere else but
    this package's code and the standard library's, `stdlib` with a trailing separator), or
    `other` (those two, and a path that is not absolute)."""
    if _project(path, base):
        return "project"
    if _installed_top(path) is not None:
        return "installed"
    if not os.path.isabs(path) or path.startswith((_PACKAGE_DIR + os.sep, stdlib)):
        return "other"
    return "outside"


def _installed_top(path: str) -> str | None:
    """The installed package or module a file belongs to (the entry right under the innermost
    `site-packages` or `dist-packages` folder), or None for a file that is not installed."""
    parts = path.split(os.sep)
    for at in range(len(parts) - 2, -1, -1):
        if parts[at] in _INSTALLED:
            return os.sep.join(parts[: at + 2])
    return None


def recorded_input(path: str, root: Path) -> str:
    """An input as a snapshot records it: relative to the root, with `/` separators; a listed
    folder keeps its trailing `/`."""
    if path in UNSEEN_REASONS:
        return path
    shown = Path(os.path.relpath(path, root)).as_posix()
    return shown + "/" if path.endswith(os.sep) else shown


def is_folder(path: str) -> bool:
    """Whether an input (absolute or as recorded) is a listed folder."""
    return path.endswith(("/", os.sep))


_PACKAGES: dict[str, str] = {}


def _package_of(path: str) -> str:
    """The package a loaded module file belongs to, for its relative imports (looked up once
    per file: a module's package does not change)."""
    known = _PACKAGES.get(path)
    if known is not None:
        return known
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == path:
            package = _PACKAGES[path] = str(getattr(module, "__package__", "") or "")
            return package
    return ""


def static_imports(path: str, package: str) -> set[str]:
    """Every module an import statement of the file names (relative ones resolved), and each
    `from X import name` also as `X.name` (which may be a submodule)."""
    try:
        stat = os.stat(path)
    except OSError:
        return set()
    return set(_static_imports(path, package, stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=4096)
def _static_imports(path: str, package: str, mtime: int, size: int) -> frozenset[str]:
    try:
        tree = ast.parse(Path(path).read_bytes(), path)
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module or "", {"__package__": package}, node.level)
            if base:
                names.add(base)
            names.update(f"{base}.{alias.name}" if base else alias.name for alias in node.names)
    return frozenset(names)
