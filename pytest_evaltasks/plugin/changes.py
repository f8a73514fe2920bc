"""`--evaltasks-changed[=REF]`: the tasks whose prompts a change since a git revision can affect.

A task is selected when any of these changed since REF (committed, staged, or in the working
tree, new and deleted files included): its task module; a module of the project that its module
imports, directly or through other project modules (as recorded while the modules were
imported, never by reading their source); its data under the data root; its snapshot files;
the chat template file in use. The default REF is the merge base with the branch the checkout
tracks, or `HEAD` when it tracks none.
"""

from __future__ import annotations

import contextlib
import functools
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.rows import local_dataset_dir
from ..engine.task_string import parse_label
from ..errors import EvalTaskError
from ..snapshot.storage import SNAPSHOT_SUFFIX, label_of_file

if TYPE_CHECKING:
    from ..engine.registry import Registry

DEFAULT_REF = ""
"""`--evaltasks-changed` without a value: the merge base with the upstream branch, or HEAD."""


class GitError(EvalTaskError):
    """git is missing, the folder is not a checkout, or the revision is unknown."""


@dataclass
class Changes:
    """What changed since a revision, and which tasks it selects (with the reasons)."""

    since: str
    files: set[Path]
    selected: dict[str, list[str]] = field(default_factory=dict)
    """Task name -> why it is selected."""

    def describe(self) -> str:
        """`3 tasks: mmlu.py changed; helpers/mcq.py changed, imported by arc.py and obqa.py`."""
        by_reason: dict[str, list[str]] = defaultdict(list)
        for name, reasons in self.selected.items():
            for reason in reasons:
                by_reason[reason].append(name)
        count = len(self.selected)
        head = f"{count} task{'s' if count != 1 else ''} changed since {self.since}"
        if not by_reason:
            return head
        return f"{head}: " + "; ".join(sorted(by_reason))


def changed_files(root: Path, ref: str) -> tuple[str, set[Path]]:
    """A description of the revision compared with, and every changed path (absolute)."""
    top = Path(_git(root, "rev-parse", "--show-toplevel").strip())
    if ref == DEFAULT_REF:
        ref, since = _default_ref(top)
    else:
        since = ref
    try:
        _git(top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except GitError:
        raise GitError(
            f"--evaltasks-changed: {ref!r} is not a revision of the repository at {top} "
            f"(use a branch, tag or commit, e.g. --evaltasks-changed=origin/main)"
        ) from None
    names = _git(top, "diff", "--name-only", "--no-renames", ref, "--").splitlines()
    names += _git(top, "ls-files", "--others", "--exclude-standard").splitlines()
    return since, {(top / name).resolve() for name in names if name}


def _default_ref(top: Path) -> tuple[str, str]:
    """The merge base with the tracked branch, or HEAD."""
    try:
        upstream = _git(top, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
    except GitError:
        return "HEAD", "HEAD"
    upstream = upstream.strip()
    base = _git(top, "merge-base", "HEAD", upstream).strip()
    return base, f"the merge base with {upstream} ({base[:10]})"


def _git(cwd: Path, *args: str) -> str:
    """Run git; its failure is a `GitError` that says what to do."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60
        )
    except FileNotFoundError:
        raise GitError("--evaltasks-changed needs git, which is not installed") from None
    if done.returncode != 0:
        message = done.stderr.strip() or f"git {' '.join(args)} failed"
        if "not a git repository" in message:
            raise GitError(f"--evaltasks-changed: {cwd} is not inside a git repository")
        raise GitError(f"--evaltasks-changed: {message}")
    return done.stdout


def select_changed(
    registry: Registry,
    files: set[Path],
    since: str,
    root: Path,
    snapshot_dir: Path,
    template: Path | None,
) -> Changes:
    """The tasks the changed `files` can affect, each with why.

    Work is done per module and per changed file, never per task and file: lighteval's suite
    has tens of thousands of tasks in a few hundred modules, and resolving a path costs a
    system call per part.
    """
    changes = Changes(since, files)
    shown = _relative_to(root)
    if template is not None and template.resolve() in files:
        for name in registry.names:
            changes.selected[name] = [f"{shown(template)} changed (the chat template in use)"]
        return changes
    module_reasons = _module_reasons(registry, files, root, shown)
    changed_data = _changed_data(registry, files)
    snapshot_owners = _snapshot_owners(snapshot_dir, files)
    for name in registry.names:
        entry = registry.entries[name]
        reasons = list(module_reasons.get(entry.origin, ()))
        raw = entry.raw
        data = changed_data.get((getattr(raw, "hf_repo", None), getattr(raw, "hf_subset", None)))
        if data is not None:
            reasons.append(f"{shown(data)} changed")
        for snapshot in snapshot_owners.get(name, []):
            reasons.append(f"{shown(snapshot)} changed")
        if reasons:
            changes.selected[name] = reasons
    return changes


def _module_reasons(
    registry: Registry, files: set[Path], root: Path, shown: Callable[[Path], str]
) -> dict[Path, list[str]]:
    """Why each task module's tasks are selected: the module changed, or a project file it
    imports did. Keyed by the module's path as registered; modules with no reason are left out.
    """
    imports = _project_imports(registry, root.resolve())
    importers: dict[Path, str] = {}
    reasons: dict[Path, list[str]] = {}
    for loaded in registry.modules:
        origin = loaded.path.resolve()
        found = [f"{shown(origin)} changed"] if origin in files else []
        for helper in sorted(imports.get(origin, set()) & files):
            if helper not in importers:
                users = sorted(shown(module) for module, used in imports.items() if helper in used)
                importers[helper] = " and ".join(users)
            found.append(f"{shown(helper)} changed, imported by {importers[helper]}")
        if found:
            reasons[loaded.path] = found
    return reasons


def _project_imports(registry: Registry, root: Path) -> dict[Path, set[Path]]:
    """For each task module, the project files it imports, directly or transitively.

    `root` is resolved already.
    """
    edges: dict[str, set[str]] = defaultdict(set)
    for loaded in registry.modules:
        for importer, targets in loaded.edges.items():
            edges[importer] |= targets
    files = {name: _file_of(name) for name in {*edges, *(t for ts in edges.values() for t in ts)}}
    local = {name: path for name, path in files.items() if path is not None and _local(path, root)}
    closure: dict[Path, set[Path]] = {}
    for loaded in registry.modules:
        seen: set[str] = set()
        stack = [loaded.name]
        while stack:
            current = stack.pop()
            for target in edges.get(current, ()):
                if target in local and target not in seen:
                    seen.add(target)
                    stack.append(target)
        closure[loaded.path.resolve()] = {local[name] for name in seen}
    return closure


def _file_of(module_name: str) -> Path | None:
    """The file a loaded module came from."""
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None)
    return Path(path).resolve() if path else None


def _local(path: Path, root: Path) -> bool:
    """A file of the project: under its (resolved) root, and not an installed package."""
    parts = set(path.parts)
    return _inside(path, root) and not parts & {"site-packages", "dist-packages"}


def _snapshot_owners(snapshot_dir: Path, files: set[Path]) -> dict[str, list[Path]]:
    """Changed snapshot files by the task they record (deleted ones are orphans' business)."""
    owners: dict[str, list[Path]] = defaultdict(list)
    directory = snapshot_dir.resolve()
    for path in sorted(files):
        if path.parent != directory or path.suffix != f".{SNAPSHOT_SUFFIX}" or not path.is_file():
            continue
        label = label_of_file(path)
        if label is not None:
            with contextlib.suppress(EvalTaskError):
                owners[parse_label(label).name].append(path)
    return owners


def _changed_data(registry: Registry, files: set[Path]) -> dict[tuple[object, object], Path]:
    """The local data folders holding a changed file, by the (hf_repo, hf_subset) they hold."""
    if registry.data_dir is None:
        return {}
    data_root = registry.data_dir.resolve()
    changed_dirs = {
        parent for path in files if data_root in path.parents for parent in path.parents
    }
    if not changed_dirs:
        return {}  # the usual case: no data changed, so no task's folder is looked at
    changed: dict[tuple[object, object], Path] = {}
    seen: set[tuple[object, object]] = set()
    for entry in registry.entries.values():
        key = (getattr(entry.raw, "hf_repo", None), getattr(entry.raw, "hf_subset", None))
        repo, subset = key
        if key in seen or not isinstance(repo, str):
            continue
        seen.add(key)
        folder = local_dataset_dir(data_root, repo, subset if isinstance(subset, str) else None)
        if folder in changed_dirs:
            changed[key] = folder
    return changed


def _inside(path: Path, directory: Path) -> bool:
    """`path` is `directory` (resolved) or under it."""
    return path == directory or directory in path.parents


def _relative_to(root: Path) -> Callable[[Path], str]:
    """A function showing paths relative to `root` when inside it (each path resolved once)."""
    resolved = root.resolve()

    @functools.cache
    def shown(path: Path) -> str:
        try:
            return path.resolve().relative_to(resolved).as_posix()
        except ValueError:
            return str(path)

    return shown
