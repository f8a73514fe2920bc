"""`--evaltasks-changed[=REF]`: the tasks whose prompts a change since a git revision can affect.

Selection over-approximates: a task is selected when anything it may read changed since REF
(committed, staged, in the working tree, new and deleted files included):

- the project files its code read, as its snapshots record them (`[inputs]`, observed while
  the task was imported and built: helpers imported at call time, files read, data), in the
  working copy and at REF;
- what its module imports now (observed while the registry imported it);
- its local data folder, its `hf_data_files`, a local `hf_repo`;
- its snapshot files, deleted ones too;
- a file that shapes every task: `pytest.ini`, `pyproject.toml`, `tox.ini`, `setup.cfg`,
  `setup.py`, any `conftest.py`, requirement and lock files, the chat template in use.

A task whose snapshots record no inputs (new, or unreadable) is selected too: what it reads
cannot be told. Paths are read from git unquoted (`-z`), anywhere in the repository (not only
under the root directory), through symbolic links and into submodules. The default REF is the
merge base with the repository's default branch; in CI, without one, REF must be given.
"""

from __future__ import annotations

import fnmatch
import os
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.inputs import UNSEEN_REASONS, is_folder
from ..snapshot.line_text import unescape_line
from ..snapshot.parse import SnapshotFileError, normalise, parse_head
from ..snapshot.storage import SNAPSHOT_SUFFIX
from .git import GitError, commit_of, files_at, run_git, toplevel
from .plan import request_of

if TYPE_CHECKING:
    from ..engine.registry import Registry

DEFAULT_REF = ""
"""`--evaltasks-changed` without a value: the merge base with the default branch."""

DEFAULT_BRANCHES = ("origin/HEAD", "origin/main", "origin/master", "main", "master")

SHAPING_FILES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    ".gitattributes",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
    "setup.py",
    "conftest.py",
    "requirements*.txt",
    "requirements*.in",
    "constraints*.txt",
    "*.lock",
    "Pipfile",
    "environment.yml",
)
"""File names (glob patterns) whose change can shape every task's prompts."""


@dataclass
class Changes:
    """What changed since a revision, and which tasks it selects (with the reasons)."""

    since: str
    files: set[Path]
    selected: dict[str, list[str]] = field(default_factory=dict)
    """Task name -> why it is selected."""

    def describe(self) -> str:
        """`3 tasks changed since REF: mmlu.py changed; helpers/mcq.py changed, imported by ...`,
        or that nothing is to be checked."""
        by_reason: dict[str, list[str]] = defaultdict(list)
        for name, reasons in self.selected.items():
            for reason in reasons:
                by_reason[reason].append(name)
        count = len(self.selected)
        head = f"{count} task{'s' if count != 1 else ''} changed since {self.since}"
        if not count:
            return f"{head}: nothing to check"
        parts = []
        for reason in sorted(by_reason)[:8]:
            names = sorted(by_reason[reason])
            listed = ", ".join(names[:3]) + (
                f" and {len(names) - 3} more" if len(names) > 3 else ""
            )
            parts.append(f"{reason} ({listed})")
        more = f"; ... ({len(by_reason) - 8} more reasons)" if len(by_reason) > 8 else ""
        return f"{head}: " + "; ".join(parts) + more


@dataclass(frozen=True)
class ChangedFiles:
    """The paths that changed since a revision, and how to tell whether a path is one."""

    since: str
    top: Path
    commit: str
    paths: frozenset[str]
    """Changed paths, absolute, as git names them and resolved through links."""
    folders: frozenset[str]
    """Changed paths that are folders (submodules) or links to folders: all below them count."""

    def changed_input(self, path: str) -> str | None:
        """The changed path that makes an input (absolute) changed: the file itself (or a
        changed folder holding it), or, for a listed folder (a trailing separator), the first
        changed path anywhere inside it (git names files, not the new folder a listing would
        see as an entry, so anything below counts); None when it did not change."""
        if not is_folder(path):
            return path if self.touches(path) else None
        folder = path.rstrip(os.sep)
        if self.touches(folder):
            return folder
        inside = sorted(
            candidate
            for candidate in self.paths
            if candidate.startswith(path) or candidate.startswith(os.path.realpath(folder) + os.sep)
        )
        return inside[0] if inside else None

    def touches(self, path: str) -> bool:
        """Whether `path` (absolute) is, or is under, a changed path, as given or resolved."""
        for candidate in {path, os.path.realpath(path)}:
            if candidate in self.paths:
                return True
            parent = os.path.dirname(candidate)
            while parent and parent != os.path.dirname(parent):
                if parent in self.folders:
                    return True
                parent = os.path.dirname(parent)
        return False


def changed_files(start: Path, ref: str, in_ci: bool = False) -> ChangedFiles:
    """Every path changed since `ref` (committed, staged, working tree, untracked)."""
    top = toplevel(start)
    if ref == DEFAULT_REF:
        ref, since = _default_ref(top, in_ci)
    else:
        since = ref
    commit = commit_of(top, ref)
    names = _split(run_git(top, "diff", "-z", "--name-only", "--no-renames",
                           "--ignore-submodules=none", commit, "--"))  # fmt: skip
    names += _split(run_git(top, "ls-files", "-z", "--others", "--exclude-standard"))
    paths: set[str] = set()
    folders: set[str] = set()
    for name in names:
        path = os.path.join(str(top), name)
        paths.add(path)
        paths.add(os.path.realpath(path))
        if os.path.isdir(path) or os.path.islink(path):
            folders.add(path)
            folders.add(os.path.realpath(path))
    folders |= _changed_in_submodules(top, names)
    return ChangedFiles(since, top, commit, frozenset(paths), frozenset(folders))


def _split(output: bytes) -> list[str]:
    return [name.decode("utf-8", "surrogateescape") for name in output.split(b"\0") if name]


def _changed_in_submodules(top: Path, names: list[str]) -> set[str]:
    """A changed submodule counts as changed throughout (its own history is not walked)."""
    try:
        listing = run_git(top, "submodule", "status", "--recursive")
    except GitError:
        return set()
    folders: set[str] = set()
    for line in listing.decode("utf-8", "surrogateescape").splitlines():
        parts = line[1:].split()
        if len(parts) >= 2:
            path = os.path.join(str(top), parts[1])
            if line.startswith(("+", "-", "U")) or parts[1] in names:
                folders.add(path)
                folders.add(os.path.realpath(path))
    return folders


def _default_ref(top: Path, in_ci: bool) -> tuple[str, str]:
    """The merge base with the repository's default branch; in CI it must exist and differ
    from HEAD, since comparing a commit with itself would select nothing, silently."""
    head = run_git(top, "rev-parse", "HEAD").decode().strip()
    for branch in DEFAULT_BRANCHES:
        try:
            run_git(top, "rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}")
        except GitError:
            continue
        base = run_git(top, "merge-base", "HEAD", branch).decode().strip()
        if base == head and in_ci:
            raise GitError(
                f"the merge base with {branch} is HEAD itself, so a run would compare this "
                f"commit with itself and check nothing; in CI name the revision to compare with: "
                f"--evaltasks-changed=REF (the target branch of a pull request, or the commit a "
                f"push started from)"
            )
        note = " (HEAD itself: only uncommitted changes count)" if base == head else ""
        return base, f"the merge base with {branch} ({base[:10]}){note}"
    if in_ci:
        raise GitError(
            "no default branch to compare with (no origin/HEAD, origin/main, origin/master, "
            "main or master in this clone); in CI name it: --evaltasks-changed=REF, e.g. "
            "--evaltasks-changed=origin/main (and fetch it: fetch-depth: 0)"
        )
    return "HEAD", "HEAD"


def select_changed(
    registry: Registry,
    changed: ChangedFiles,
    root: Path,
    snapshot_dir: Path,
    templates: list[Path],
    names: Iterable[str] | None = None,
) -> Changes:
    """The tasks the changed files can affect, each with why: of `names` (registered tasks;
    default: every name of the listed folders).

    Work is done per module, per snapshot file and per changed file, never per task and file:
    lighteval's suite has tens of thousands of tasks in a few hundred modules.
    """
    changes = Changes(changed.since, {Path(path) for path in changed.paths})
    shown = _relative_to(root)
    shaping = _shaping(changed, templates, shown)
    names = registry.names if names is None else list(names)
    if shaping:
        for name in names:
            changes.selected[name] = shaping
        return changes
    recorded = _recorded_inputs(changed, snapshot_dir, root)
    modules = _module_reasons(registry, changed, root, shown)
    for name in names:
        entry = registry.entries[name]
        reasons = list(modules.get(entry.origin, ()))
        reasons += _dependency_reasons(registry.dependencies(name), changed, shown)
        record = recorded.get(name)
        if record is None:
            reasons.append("no snapshot records what it reads")
        else:
            reasons += record
        if reasons:
            changes.selected[name] = sorted(set(reasons))
    return changes


def _dependency_reasons(
    dependencies: dict[str, str], changed: ChangedFiles, shown: Callable[[str], str]
) -> list[str]:
    """What a task's source says it reads (its config files, its hooks' modules, its data)
    that changed, each with what it is to the task; a folder counts for any file in it."""
    reasons = []
    for path, what in sorted(dependencies.items()):
        if changed.touches(path) or any(
            candidate.startswith(path + os.sep) for candidate in changed.paths
        ):
            reasons.append(f"{shown(path)} changed{what}")
    return reasons


def _shaping(
    changed: ChangedFiles, templates: list[Path], shown: Callable[[str], str]
) -> list[str]:
    """Changed files that shape every task."""
    reasons = []
    for path in sorted(changed.paths):
        name = os.path.basename(path)
        if any(fnmatch.fnmatch(name, pattern) for pattern in SHAPING_FILES):
            reasons.append(f"{shown(path)} changed (it shapes every task)")
    for template in templates:
        if changed.touches(str(template.resolve())):
            reasons.append(f"{shown(str(template))} changed (a chat template in use)")
    return sorted(set(reasons))


def _module_reasons(
    registry: Registry, changed: ChangedFiles, root: Path, shown: Callable[[str], str]
) -> dict[Path, list[str]]:
    """Why each task module's tasks are selected by what the module reads at import: its own
    file, the project files it imports (directly or through others, also those loaded before
    the registry, read from their source), the files its import opened."""
    from ..engine.inputs import inputs_of

    reasons: dict[Path, list[str]] = {}
    for loaded in registry.modules:
        origin = str(loaded.path.resolve())
        modules = {loaded.name, *(t for targets in loaded.edges.values() for t in targets)}
        read = inputs_of(modules, {origin, *loaded.opened}, changed.top)
        found = [reason for path in sorted(read) if (reason := _input_reason(changed, path, shown))]
        found += [reason for mark, reason in UNSEEN_REASONS.items() if mark in read]
        if changed.touches(origin) and f"{shown(origin)} changed" not in found:
            found.append(f"{shown(origin)} changed")
        if found:
            reasons[loaded.path] = found
    return reasons


def _input_reason(changed: ChangedFiles, path: str, shown: Callable[[str], str]) -> str | None:
    """Why a task is selected by one of its inputs (absolute; a listed folder ends with a
    separator), or None when that input did not change."""
    found = changed.changed_input(path)
    if found is None:
        return None
    if is_folder(path) and found != path.rstrip(os.sep):
        return f"{shown(found)} changed (in {shown(path.rstrip(os.sep))}/, which its code lists)"
    return f"{shown(found)} changed"


def _recorded_inputs(changed: ChangedFiles, snapshot_dir: Path, root: Path) -> dict[str, list[str]]:
    """Task name -> why its snapshots select it (empty: they record inputs, none changed).

    Snapshots are read in the working copy and at REF (a deleted one still names its task and
    its inputs): only their header, up to the doc hashes.
    """
    found: dict[str, list[str]] = {}
    shown = _relative_to(root)
    texts: list[tuple[str, str]] = []
    if snapshot_dir.is_dir():
        for file in sorted(snapshot_dir.glob(f"*.{SNAPSHOT_SUFFIX}")):
            texts.append((str(file.resolve()), _head_text(file)))
    try:
        at_ref = files_at(changed.top, changed.commit, snapshot_dir)
    except GitError:
        at_ref = None
    if at_ref is not None:
        for name, raw in at_ref.files.items():
            if name.endswith(f".{SNAPSHOT_SUFFIX}"):
                texts.append((str((snapshot_dir / name).resolve()), raw.decode("utf-8", "replace")))
    for path, text in texts:
        label, inputs = _label_and_inputs(text)
        request = request_of(label)
        if request is None:
            continue
        reasons = found.setdefault(request.name, [])
        if changed.touches(path):
            reasons.append(
                f"{shown(path)} changed" if os.path.exists(path) else f"{shown(path)} deleted"
            )
        if inputs is None:
            reasons.append(f"{shown(path)} records no inputs")
            continue
        for relative in inputs:
            recorded = unescape_line(relative)
            if recorded in UNSEEN_REASONS:
                reasons.append(UNSEEN_REASONS[recorded])
                continue
            absolute = os.path.normpath(os.path.join(str(root), recorded))
            reason = _input_reason(
                changed, absolute + os.sep if is_folder(recorded) else absolute, shown
            )
            if reason is not None:
                reasons.append(reason)
    return found


def _head_text(path: Path) -> str:
    """A snapshot file's text up to its doc hashes (all a selection needs)."""
    chunks: list[bytes] = []
    try:
        with path.open("rb") as stream:
            while chunk := stream.read(16384):
                chunks.append(chunk)
                if b"\n[doc hashes]" in chunk or len(chunks) > 64:
                    break
    except OSError:
        return ""
    return b"".join(chunks).decode("utf-8", "replace")


def _label_and_inputs(text: str) -> tuple[str | None, list[str] | None]:
    """The task label and the recorded inputs of a snapshot's head (None: not readable, or
    no inputs recorded)."""
    cut = text.find("\n[doc hashes]")
    head = normalise(text if cut == -1 else text[: cut + 1])
    try:
        parsed = parse_head(head, complete=False)
    except SnapshotFileError:
        return None, None
    label = parsed.sections.get("task", {}).get("name")
    inputs = parsed.lists.get("inputs")
    return label, inputs


def _relative_to(root: Path) -> Callable[[str], str]:
    """A function showing paths relative to `root` when inside it."""
    resolved = str(root.resolve())

    def shown(path: str) -> str:
        path = str(path)
        if path.startswith(resolved + os.sep):
            return Path(path[len(resolved) + 1 :]).as_posix()
        try:
            return Path(os.path.relpath(path, resolved)).as_posix()
        except ValueError:
            return path

    return shown
