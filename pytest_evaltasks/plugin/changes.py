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
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.task_string import parse_label
from ..errors import EvalTaskError
from ..snapshot.storage import SNAPSHOT_SUFFIX

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
    """The tasks the changed `files` can affect, each with why."""
    changes = Changes(since, files)
    shown = _relative_to(root)
    if template is not None and template.resolve() in files:
        for name in registry.names:
            changes.selected[name] = [f"{shown(template)} changed (the chat template in use)"]
        return changes
    imports = _project_imports(registry, root)
    snapshot_owners = _snapshot_owners(snapshot_dir, files)
    for name in registry.names:
        entry = registry.entries[name]
        origin = entry.origin.resolve()
        reasons: list[str] = []
        if origin in files:
            reasons.append(f"{shown(origin)} changed")
        for helper in sorted(imports.get(origin, set()) & files):
            importers = sorted(shown(module) for module, used in imports.items() if helper in used)
            reasons.append(f"{shown(helper)} changed, imported by {' and '.join(importers)}")
        data = _data_dir(registry, name)
        if data is not None and any(_inside(path, data) for path in files):
            reasons.append(f"{shown(data)} changed")
        for snapshot in snapshot_owners.get(name, []):
            reasons.append(f"{shown(snapshot)} changed")
        if reasons:
            changes.selected[name] = reasons
    return changes


def _project_imports(registry: Registry, root: Path) -> dict[Path, set[Path]]:
    """For each task module, the project files it imports, directly or transitively."""
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
    """A file of the project: under its root, and not an installed package."""
    parts = set(path.parts)
    return _inside(path, root) and not parts & {"site-packages", "dist-packages"}


def _snapshot_owners(snapshot_dir: Path, files: set[Path]) -> dict[str, list[Path]]:
    """Changed snapshot files by the task they record (deleted ones are orphans' business)."""
    owners: dict[str, list[Path]] = defaultdict(list)
    directory = snapshot_dir.resolve()
    for path in sorted(files):
        if path.parent != directory or path.suffix != f".{SNAPSHOT_SUFFIX}" or not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()[:8]:
            if line.startswith("name: "):
                with contextlib.suppress(EvalTaskError):
                    owners[parse_label(line[len("name: ") :].strip()).name].append(path)
                break
    return owners


def _data_dir(registry: Registry, name: str) -> Path | None:
    """The local data folder of a task's dataset, from its config as registered."""
    if registry.data_dir is None:
        return None
    raw = registry.entries[name].raw
    repo, subset = getattr(raw, "hf_repo", None), getattr(raw, "hf_subset", None)
    if not isinstance(repo, str):
        return None
    return (registry.data_dir / repo / (subset or "default")).resolve()


def _inside(path: Path, directory: Path) -> bool:
    """`path` is `directory` or under it."""
    try:
        path.relative_to(directory.resolve())
    except ValueError:
        return False
    return True


def _relative_to(root: Path):  # type: ignore[no-untyped-def]
    """A function showing paths relative to `root` when inside it."""
    resolved = root.resolve()

    def shown(path: Path) -> str:
        try:
            return path.resolve().relative_to(resolved).as_posix()
        except ValueError:
            return str(path)

    return shown
