"""`--evaltasks-changed[=REF]`: the tasks whose prompts a change since a git revision can affect.

Selection is fail-safe: a task is left out only when no changed path can affect it. Every path
changed since REF (committed, staged, in the working tree, new, deleted and untracked files
included, anywhere in the repository, read from git unquoted, through links and into
submodules) is classified:

- a file that configures the run (`RunConfiguration`: the ini file pytest loaded and every
  file pytest could take its configuration from, any `conftest.py`, the chat template and
  every file its resolution read, a task-list file) selects every task;
- a path some tasks claim (`claims`: their snapshots' `[inputs]` in the working copy and at
  REF, what their modules import and read now, their data, their snapshot files) selects them;
- a path the project declares irrelevant (`ignore_list`, the `evaltasks_changed_ignore` ini
  key) selects nothing;
- any other path selects every task: nothing shows it cannot affect one.

A task no snapshot records the reads of (new, or unreadable) is selected whatever changed, and
one whose reads cannot all be seen (its code started another process) by any change that is
not ignored. The default REF is the merge base with the repository's default branch; in CI,
without one, REF must be given.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.inputs import UNSEEN_REASONS, is_folder
from ..engine.line_text import unescape_line
from ..snapshot.parse import SnapshotFileError, normalise, parse_head
from ..snapshot.storage import SNAPSHOT_SUFFIX
from .claims import Claim, Claims
from .git import GitError, commit_of, files_at, run_git, toplevel
from .ignore_list import INI_KEY as IGNORE_KEY
from .ignore_list import IgnoreList
from .plan import request_of

if TYPE_CHECKING:
    from ..engine.registry import Registry

DEFAULT_REF = ""
"""`--evaltasks-changed` without a value: the merge base with the default branch."""

DEFAULT_BRANCHES = ("origin/HEAD", "origin/main", "origin/master", "main", "master")

CONFIG_FILE_NAMES = frozenset(
    {"pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini",
     "setup.cfg"}
)  # fmt: skip
"""The files pytest takes its configuration from (the first it finds, searching up from the
arguments' common folder): one added, removed or changed in such a folder can change the run."""

CONFTEST = "conftest.py"


@dataclass(frozen=True)
class RunConfiguration:
    """The files whose change can change every task's prompts, because they configure the run
    rather than one task: never narrowed by claims, never ignored."""

    files: frozenset[str]
    """Absolute paths, as given and resolved: the ini file pytest loaded, the chat templates in
    use and every file their resolution read, the task-list files of the task strings."""
    config_folders: frozenset[str]
    """Where pytest looks for its configuration (the root directory, the invocation directory
    and every folder above them): a configuration file there, loaded or not, counts."""

    @classmethod
    def of(cls, files: Iterable[str | Path], folders: Iterable[str | Path]) -> RunConfiguration:
        """From the files read to configure the run and the folders pytest configures from
        (each folder's parents count too)."""
        given = {os.path.abspath(path) for path in files}
        found = given | {os.path.realpath(path) for path in given}
        config_folders: set[str] = set()
        for folder in folders:
            current = os.path.abspath(folder)
            while True:
                config_folders |= {current, os.path.realpath(current)}
                parent = os.path.dirname(current)
                if parent == current:
                    break
                current = parent
        return cls(frozenset(found), frozenset(config_folders))

    def configures(self, path: str) -> str | None:
        """Why the changed `path` (absolute) configures the run, or None."""
        name = os.path.basename(path)
        if name == CONFTEST:
            return "a conftest.py: it configures the run"
        if path in self.files or os.path.realpath(path) in self.files:
            return "it configures the run"
        if name in CONFIG_FILE_NAMES and os.path.dirname(path) in self.config_folders:
            return "pytest may take its configuration from it"
        return None


@dataclass
class Changes:
    """What changed since a revision, how each path was classified, and which tasks it
    selects (with the reasons)."""

    since: str
    files: set[Path]
    selected: dict[str, list[str]] = field(default_factory=dict)
    """Task name -> why it is selected."""
    configuring: list[str] = field(default_factory=list)
    """Changed files that configure the run, each with why (every task is selected)."""
    claimed: dict[str, list[str]] = field(default_factory=dict)
    """Task name -> the changed paths it claims, as reasons."""
    unclaimed: list[str] = field(default_factory=list)
    """Changed paths no task claims and the ignore list does not hide (every task is
    selected), relative to the root."""
    ignored: list[str] = field(default_factory=list)
    """Changed paths the ignore list hides, relative to the root."""
    claimed_files: list[str] = field(default_factory=list)
    """Changed paths some task claims, relative to the root."""

    @property
    def widened(self) -> list[str]:
        """Why every task is selected (empty: the selection was narrowed)."""
        reasons = list(self.configuring)
        if self.unclaimed:
            listed = ", ".join(self.unclaimed[:5]) + (
                f" and {len(self.unclaimed) - 5} more" if len(self.unclaimed) > 5 else ""
            )
            count = len(self.unclaimed)
            reasons.append(
                f"{count} changed file{'s' if count != 1 else ''} no task claims ({listed}), so "
                f"none can be shown irrelevant: every task is checked (declare files that "
                f"cannot affect any prompt in {IGNORE_KEY} (ini) to narrow the selection)"
            )
        return reasons

    def describe(self) -> str:
        """`3 tasks changed since REF: mmlu.py changed; helpers/mcq.py changed, imported by ...`,
        or that nothing is to be checked."""
        count = len(self.selected)
        head = f"{count} task{'s' if count != 1 else ''} changed since {self.since}"
        ignored = self._ignored_note()
        if not count:
            return f"{head}: nothing to check{self._unselected_note()}{ignored}"
        if self.widened:
            return f"{head}: " + "; ".join(self.widened) + ignored
        by_reason: dict[str, list[str]] = defaultdict(list)
        for name, reasons in self.selected.items():
            for reason in reasons:
                by_reason[reason].append(name)
        parts = []
        for reason in sorted(by_reason)[:8]:
            names = sorted(by_reason[reason])
            listed = ", ".join(names[:3]) + (
                f" and {len(names) - 3} more" if len(names) > 3 else ""
            )
            parts.append(f"{reason} ({listed})")
        more = f"; ... ({len(by_reason) - 8} more reasons)" if len(by_reason) > 8 else ""
        return f"{head}: " + "; ".join(parts) + more + ignored

    def _unselected_note(self) -> str:
        """Why nothing was selected, naming the changed files: none changed, or only files read
        by tasks that were not asked for."""
        if not self.claimed_files:
            return "" if self.files or self.ignored else " (no file changed)"
        readers = sorted(self.claimed)
        return (
            f" ({_listed(self.claimed_files)} changed, read only by tasks not asked for: "
            f"{_listed(readers)})"
        )

    def _ignored_note(self) -> str:
        """What the ignore list hid, for the header."""
        if not self.ignored:
            return ""
        listed = ", ".join(self.ignored[:3]) + (
            f" and {len(self.ignored) - 3} more" if len(self.ignored) > 3 else ""
        )
        return f" ({listed} changed, ignored by {IGNORE_KEY})"


@dataclass(frozen=True)
class ChangedFiles:
    """The paths that changed since a revision, and how to tell whether a path is one."""

    since: str
    top: Path
    commit: str
    names: frozenset[str]
    """Changed paths, absolute, as git names them (under the checkout's folder)."""
    paths: frozenset[str]
    """Changed paths, absolute, as git names them and resolved through links."""
    folders: frozenset[str]
    """Changed paths that are folders (submodules) or links to folders: all below them count."""


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
    given = frozenset(os.path.join(str(top), name) for name in names)
    return ChangedFiles(since, top, commit, given, frozenset(paths), frozenset(folders))


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
    configuration: RunConfiguration,
    ignore: IgnoreList,
    names: Iterable[str] | None = None,
) -> Changes:
    """The tasks the changed files can affect, each with why: of `names` (registered tasks;
    default: every name of the listed folders).

    Every changed path is classified, and only a path shown to concern some tasks narrows the
    selection: one that configures the run selects every task; one that tasks claim (their
    records, their modules' reads, their data, their snapshots) selects them; one that matches
    the declared ignore list selects nothing; any other selects every task. Work is done per
    module, per snapshot file and per changed path, never per task and path: lighteval's suite
    has tens of thousands of tasks in a few hundred modules.
    """
    names = registry.names if names is None else list(names)
    claims, unrecorded = _claims(registry, changed, root, snapshot_dir)
    changes = Changes(changed.since, {Path(path) for path in changed.paths})
    classify(changes, changed.names, changed.folders, configuration, claims, ignore, root)
    return choose(changes, names, claims, unrecorded)


def classify(
    changes: Changes,
    paths: Iterable[str],
    folders: frozenset[str],
    configuration: RunConfiguration,
    claims: Claims,
    ignore: IgnoreList,
    root: Path,
) -> None:
    """Sort each changed path (absolute; `folders` are changed folders, such as submodules)
    into `changes`: configuring the run, claimed by tasks, ignored, or unclaimed."""
    shown = _relative_to(root)
    for path in sorted(paths):
        why = configuration.configures(path)
        if why is not None:
            changes.configuring.append(f"{shown(path)} changed ({why})")
            continue
        found = claims.of(path, path in folders)
        if found:
            changes.claimed_files.append(shown(path))
            for claim, claimed in found.items():
                changes.claimed.setdefault(claim.task, []).append(
                    _claim_reason(path, claimed, claim.what, shown)
                )
            continue
        if ignore.matches(shown(path)) is not None:
            changes.ignored.append(shown(path))
            continue
        changes.unclaimed.append(shown(path))


def choose(
    changes: Changes, names: Iterable[str], claims: Claims, unrecorded: dict[str, str]
) -> Changes:
    """The tasks of `names` the classified changes select, with why: every one when a path
    configures the run or nobody claims it; else those that claim a changed path, those whose
    reads cannot all be seen (when anything not ignored changed), and those no snapshot records
    the reads of."""
    relevant = bool(changes.configuring or changes.claimed or changes.unclaimed)
    for name in names:
        if changes.widened:
            changes.selected[name] = changes.widened
            continue
        reasons = list(changes.claimed.get(name, ()))
        if name in unrecorded:
            reasons.append(unrecorded[name])
        if relevant and name in claims.everything:
            reasons.append(claims.everything[name])
        if reasons:
            changes.selected[name] = sorted(set(reasons))
    return changes


def _claim_reason(path: str, claimed: str, what: str, shown: Callable[[str], str]) -> str:
    """Why a changed path selects a task that claims `claimed` (the path, a folder holding
    it, or for a changed folder a path inside it)."""
    deleted = "" if os.path.lexists(path) else " (deleted)"
    if claimed.endswith(os.sep) and what == "":
        folder = shown(claimed.rstrip(os.sep))
        return f"{shown(path)} changed{deleted} (in {folder}/, which its code lists)"
    return f"{shown(path)} changed{deleted}{what}"


def _claims(
    registry: Registry, changed: ChangedFiles, root: Path, snapshot_dir: Path
) -> tuple[Claims, dict[str, str]]:
    """Every claim of every registered or recorded task, and the tasks no snapshot records
    the reads of (with why they are selected)."""
    claims = Claims()
    recorded = _recorded_inputs(changed, snapshot_dir, root, claims)
    _module_claims(registry, changed, claims)
    for name in registry.names:
        for path, what in registry.dependencies(name).items():
            claims.add(path, Claim(name, what), folder=os.path.isdir(path))
    unrecorded = {
        name: "no snapshot records what it reads" for name in registry.names if name not in recorded
    }
    unrecorded.update(
        (name, why) for name, why in recorded.items() if why and name in registry.entries
    )
    return claims, unrecorded


def _module_claims(registry: Registry, changed: ChangedFiles, claims: Claims) -> None:
    """What each task module reads at import claims for its tasks: its own file, the project
    files it imports (directly or through others, also those loaded before the registry, read
    from their source), the files its import opened."""
    from ..engine.inputs import inputs_of

    tasks: dict[Path, list[str]] = {}
    for name in registry.names:
        tasks.setdefault(registry.entries[name].origin, []).append(name)
    for loaded in registry.modules:
        owners = tasks.get(loaded.path, [])
        if not owners:
            continue
        origin = str(loaded.path.resolve())
        modules = {loaded.name, *(t for targets in loaded.edges.values() for t in targets)}
        read = inputs_of(modules, {origin, *loaded.opened}, changed.top) | {origin}
        for path in read:
            for name in owners:
                if path in UNSEEN_REASONS:
                    claims.add_everything(name, UNSEEN_REASONS[path])
                else:
                    claims.add(path, Claim(name))


def _recorded_inputs(
    changed: ChangedFiles, snapshot_dir: Path, root: Path, claims: Claims
) -> dict[str, str]:
    """The claims of the snapshots, in the working copy and at REF (a deleted one still
    names its task and its inputs): each snapshot claims its own file and its `[inputs]` for
    its task. Returns the tasks that have a snapshot, each with why it must be checked anyway
    (a snapshot that records no inputs) or `""`."""
    texts: list[tuple[str, str]] = []
    folder = snapshot_dir.resolve()
    if folder.is_dir():
        for file in sorted(folder.glob(f"*.{SNAPSHOT_SUFFIX}")):
            texts.append((str(file), _head_text(file)))
    try:
        at_ref = files_at(changed.top, changed.commit, snapshot_dir)
    except GitError:
        at_ref = None
    if at_ref is not None:
        for name, raw in at_ref.files.items():
            if name.endswith(f".{SNAPSHOT_SUFFIX}"):
                texts.append((str(folder / name), raw.decode("utf-8", "replace")))
    shown = _relative_to(root)
    found: dict[str, str] = {}
    for path, text in texts:
        label, inputs = _label_and_inputs(text)
        request = request_of(label)
        if request is None:
            continue
        task = request.name
        claims.add(path, Claim(task))
        if inputs is None:
            found[task] = f"{shown(path)} records no inputs"
            continue
        found.setdefault(task, "")
        for relative in inputs:
            recorded = unescape_line(relative)
            if recorded in UNSEEN_REASONS:
                claims.add_everything(task, UNSEEN_REASONS[recorded])
                continue
            absolute = os.path.normpath(os.path.join(str(root), recorded))
            claims.add(absolute, Claim(task), folder=is_folder(recorded))
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


def _listed(names: list[str], shown: int = 3) -> str:
    """`a, b, c and 4 more`."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")
