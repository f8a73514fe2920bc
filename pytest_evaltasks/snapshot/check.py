"""One task item's whole check, as one decision: read, judge, rebuild, write, keep or refuse,
and the report.

`check` is a plain function over what the item hands it: the snapshot file as it is in the
working copy, the same file at the base revision (`--evaltasks-base`), a way to build the
task here and in a fresh process, and the run's mode. It returns a `Decision`; the pytest item
only writes what it says and fails with the report it carries.

The rules, in order:

1. A file that cannot be read back (conflict markers, not UTF-8, a newer format, edited by
   hand) fails the check and is never overwritten.
2. The build is compared with the base record: content that changed since the base while the
   version did not go up fails, and an update refuses it, whatever the working copy holds
   (re-recorded, deleted, relabelled or merged).
3. The build is compared with the working copy's record, as the version gate has always done.
4. Before a change is blamed on the version or recorded, it must be reproducible: a second
   build in this process, then a build in a fresh process under another PYTHONHASHSEED. A task
   whose prompts depend on the hash seed, but not otherwise, is recorded as built under
   PYTHONHASHSEED=0 in a fresh process, and built that way from then on.
5. A file in an older format is rewritten only when its content is verified unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from .facts import DEFAULT_DOCS_SHOWN, FORMAT_VERSION, SnapshotFacts
from .failure import FailureReport, bounded, failure_report
from .gate import (
    Outcome,
    Verdict,
    describe_change,
    ids,
    judge,
    upgrade,
    upstream_change,
    version_order,
)
from .parse import FileProblem, SnapshotFileError, normalise, recorded_shown_text
from .storage import Recorded, parse_recorded

if TYPE_CHECKING:
    from ..engine.rendered import Upstream

RECORD_SEED = 0
"""The PYTHONHASHSEED a hash-seed-dependent task is built and recorded under."""


class Built(Protocol):
    """One build of a task: its facts, and its text laid out on demand."""

    @property
    def facts(self) -> SnapshotFacts: ...

    @property
    def size(self) -> int: ...

    @property
    def partial(self) -> bool: ...

    @property
    def reads(self) -> tuple[str, ...]:
        """What the build itself read, as `[inputs]` lines: a subset of `facts.inputs`, which a
        record must hold (`facts.inputs` also holds what earlier builds' caches kept from it)."""
        ...

    def facts_in(self, format_version: int) -> SnapshotFacts: ...

    def text(self, docs_shown: int) -> str: ...

    def shown_text(self, docs_shown: int) -> str: ...

    def block_of(self, label: str) -> str | None: ...

    @property
    def upstream(self) -> Upstream | None:
        """The harness whose own release defines the task's config, if another's."""
        ...


class Builds(Protocol):
    """How the check gets builds: here, or in a fresh interpreter under a hash seed."""

    def here(self) -> Built:
        """Build the task in this process."""
        ...

    def fresh(
        self, hash_seed: int, docs_shown: int, older: tuple[int, ...], elsewhere: bool = False
    ) -> Built:
        """Build the task in a fresh process (each call a new one) under `hash_seed`; raises
        `FreshBuildError` when that process cannot build it. The build gives its facts in the
        `older` formats too (the records to verify are in them), and need not in others. With
        `elsewhere`, the process runs as on another machine: another home and temporary
        folder."""
        ...

    @property
    def other_seed(self) -> int:
        """A PYTHONHASHSEED that differs from this process's."""
        ...


class FreshBuildError(Exception):
    """A fresh process could not build the task (its message says why)."""


@dataclass(frozen=True)
class CheckMode:
    """What the run asks for."""

    update: bool = False
    allow_unversioned: bool = False
    docs_shown: int | None = None
    """`--evaltasks-docs`; None: as recorded, or the default for a new snapshot."""
    verbosity: int = 0
    base_ref: str | None = None
    """`--evaltasks-base`, as the user named it; None: no base record."""


@dataclass(frozen=True)
class RecordedInput:
    """A snapshot file as found: its text, or None when there is none, or why it is unreadable.

    `where` names it in messages: a path, or `path at REF`.
    """

    where: str
    text: str | None
    error: SnapshotFileError | None = None


@dataclass(frozen=True)
class Decision:
    """What the item does: pass, write `write` then pass, or fail with `report`."""

    outcome: Outcome
    passes: bool
    headline: str
    write: str | None = None
    report: FailureReport | None = None
    warnings: tuple[str, ...] = ()
    built: Built | None = None
    changed_docs: int = 0
    version_before: str | None = None
    version_after: str | None = None
    checked: tuple[int, int] | None = None
    """(docs checked, docs recorded) when the run rendered only some docs."""
    hash_seed: int | None = None
    """The PYTHONHASHSEED the build used in a fresh process; None: built in this process."""


@dataclass
class _State:
    """What `check` has found so far."""

    label: str
    mode: CheckMode
    working: Recorded | None
    base: Recorded | None
    warnings: list[str] = field(default_factory=list)
    reviewed: Decision | None = None
    """A change since the base under a greater version: passes, and is reported."""


def _older(state: _State) -> tuple[int, ...]:
    """The older formats of the records the build is judged against: a fresh process gives
    its facts in each too, to verify them."""
    found = {
        record.facts.format_version
        for record in (state.working, state.base)
        if record is not None and record.facts.format_version != FORMAT_VERSION
    }
    return tuple(sorted(found))


def check(
    label: str,
    recorded: RecordedInput,
    base: RecordedInput | None,
    builds: Builds,
    mode: CheckMode,
) -> Decision:
    """Decide one task item; see the module docstring for the rules."""
    try:
        working = _read(recorded)
    except SnapshotFileError as exc:
        return _unreadable(label, exc, mode)
    state = _State(label, mode, working, None)
    if base is not None:
        state.base = _read_base(base, state.warnings)
    if working is not None and working.facts.label != label:
        return _unreadable(
            label,
            SnapshotFileError(
                f"snapshot file {recorded.where} records task {working.facts.label!r}, not "
                f"{label!r} (copied or renamed by hand?); restore it from version control",
                FileProblem.EDITED,
            ),
            mode,
        )
    shown = _docs_shown(state)
    seed = _recorded_seed(state)
    try:
        built = builds.fresh(seed, shown, _older(state)) if seed is not None else builds.here()
    except FreshBuildError as exc:
        return _fail(state, Outcome.NONDETERMINISTIC, f"{label}: {exc}", [])
    if _changed(state, built):
        first: Built | SnapshotFacts = built if seed is not None else built.facts
        del built  # an in-process build's docs go before the second build's come
        settled = _reproducible(state, first, builds, seed, shown)
        if isinstance(settled, Decision):
            return settled
        built, seed = settled
    return _decide(state, built, seed, shown)


def _read(recorded: RecordedInput) -> Recorded | None:
    """The working copy's record, or None; an unreadable one raises."""
    if recorded.error is not None:
        raise recorded.error
    if recorded.text is None:
        return None
    return parse_recorded(recorded.where, recorded.text)


def _read_base(base: RecordedInput, warnings: list[str]) -> Recorded | None:
    """The base record, or None. One that cannot be read is no reviewed record: it is named in
    a warning and the working copy's record is the only one judged."""
    try:
        return _read(base)
    except SnapshotFileError as exc:
        warnings.append(f"the base record is not used: {exc}")
        return None


def _unreadable(label: str, error: SnapshotFileError, mode: CheckMode) -> Decision:
    """A file the gate cannot read: fail, and never overwrite it (that would bypass the gate).

    A format whose content cannot be verified (format 1) may be recorded anew only with
    `--evaltasks-allow-unversioned`, which says so.
    """
    refused = "; the update is refused" if mode.update else ""
    headline = f"{label}: {error}{refused}"
    return Decision(
        Outcome.UNREADABLE, False, headline, report=FailureReport(bounded(headline), [])
    )


def _docs_shown(state: _State) -> int:
    """Docs laid out in full: the option, else as recorded, else the default."""
    if state.mode.docs_shown is not None:
        return state.mode.docs_shown
    if state.working is not None:
        return state.working.facts.docs_shown
    return DEFAULT_DOCS_SHOWN


def _recorded_seed(state: _State) -> int | None:
    """The hash seed the record says the task is built under, if any."""
    for recorded in (state.working, state.base):
        if recorded is not None and recorded.facts.format_version >= 3:
            return recorded.facts.hash_seed
    return None


def _changed(state: _State, built: Built) -> bool:
    """Whether anything would be blamed on the version, or recorded as new content."""
    for recorded in (state.working, state.base):
        if recorded is not None and not _same_content(recorded.facts, built):
            return True
    return state.working is None and state.mode.update


def _same_content(recorded: SnapshotFacts, built: Built) -> bool:
    """The same `[task]` content and the same doc hashes (those this run rendered)."""
    current = built.facts_in(recorded.format_version)
    if recorded.content() != current.content():
        return False
    if not built.partial:
        return recorded.hash_text == current.hash_text
    hashes = recorded.doc_hashes
    return all(hashes.get(label) == digest for label, digest in current.doc_hashes.items())


def _same_build(first: SnapshotFacts, second: SnapshotFacts) -> list[str]:
    """Labels of docs whose hash differs between two builds (a field change counts as all)."""
    if first.content() != second.content():
        return list(first.doc_hashes) or ["(task fields)"]
    if first.hash_text == second.hash_text:
        return []
    other = second.doc_hashes
    return [label for label, digest in first.doc_hashes.items() if other.get(label) != digest]


def _reproducible(
    state: _State,
    first: Built | SnapshotFacts,
    builds: Builds,
    seed: int | None,
    shown: int,
) -> tuple[Built, int | None] | Decision:
    """The build a change is judged on, once it is shown to be reproducible (the same in this
    process, in a fresh one under another hash seed, and on another machine: another home and
    temporary folder); else a failure that names the nondeterminism for what it is.

    `first` is the first build's facts when it was built here (its docs are let go, so a large
    task is never in memory twice), or the build itself when it came from a fresh process.
    """
    pinned: Built | None
    if isinstance(first, SnapshotFacts):
        built = builds.here()
        differ = _same_build(first, built.facts)
        if differ:
            return _nondeterministic(
                state,
                f"two builds in the same run differ in {len(differ)} docs ({ids(differ)})",
                "The prompt function (or its hf_filter) gives different docs for the same rows "
                "on each build, so no snapshot can hold its prompts.",
            )
        try:  # another seed, on another machine: the same prompts there hold everywhere
            elsewhere = builds.fresh(builds.other_seed, shown, _older(state), elsewhere=True)
        except FreshBuildError as exc:
            return _nondeterministic(state, str(exc), "")
        if not _same_build(built.facts, elsewhere.facts):
            return built, None
        pinned = None
    else:
        pinned = first
    try:
        repeat = builds.fresh(RECORD_SEED, shown, _older(state))
        if pinned is None:
            pinned, repeat = repeat, builds.fresh(RECORD_SEED, shown, _older(state))
    except FreshBuildError as exc:
        return _nondeterministic(state, str(exc), "")
    differ = _same_build(pinned.facts, repeat.facts)
    if differ:
        under = f" even under a fixed PYTHONHASHSEED={RECORD_SEED}" if seed is not None else ""
        return _nondeterministic(
            state,
            f"nondeterministic across processes (hash seed, set order, import-time "
            f"randomness){under}: two fresh processes differ in {len(differ)} docs "
            f"({ids(differ)})",
            "Its prompts change from one Python process to the next: import-time randomness "
            "(random at module level, or a module that replaces random.seed) or iteration "
            "over something unordered. No snapshot can hold them; make the prompt function "
            "deterministic.",
        )
    machine = _machine_dependent(state, pinned, builds, RECORD_SEED, shown)
    if machine is not None:
        return machine
    if seed is None:
        state.warnings.append(
            f"prompts depend on PYTHONHASHSEED (set or dict order of strings): checked as "
            f"built under PYTHONHASHSEED={RECORD_SEED} in a fresh process"
        )
    return pinned, RECORD_SEED


def _machine_dependent(
    state: _State, built: Built, builds: Builds, seed: int, shown: int
) -> Decision | None:
    """A failure when a build made under `seed` differs on another machine (another home and
    temporary folder): a prompt naming a machine's path differs between machines, which no
    snapshot can hold and no version bump fixes. None when it does not."""
    try:
        other = builds.fresh(seed, shown, _older(state), elsewhere=True)
    except FreshBuildError as exc:
        return _nondeterministic(state, str(exc), "")
    differ = _same_build(built.facts, other.facts)
    if not differ:
        return None
    return _nondeterministic(
        state,
        f"its prompts depend on the machine: built with another home and temporary folder "
        f"(HOME, TMPDIR), {len(differ)} docs differ ({ids(differ)})",
        "A prompt that names a path under the home or the temporary folder "
        "(os.path.expanduser, tempfile.gettempdir()) differs on every machine, so no snapshot "
        "can hold it: keep machine paths out of the prompts.",
    )


def _nondeterministic(state: _State, what: str, why: str) -> Decision:
    """A change that is not reproducible is not a change: never blamed on the version."""
    headline = f"{state.label}: nondeterministic prompt function: {what}"
    if "across processes" in what:
        headline = f"{state.label}: {what}"
    body = [why] if why else []
    body.append(
        "Draw randomness only from the global `random` or `numpy.random` while the task is "
        "built (seeded to 1234, as lighteval seeds them), or from a generator with a fixed "
        "seed; never at import time."
    )
    return _fail(state, Outcome.NONDETERMINISTIC, headline, body)


def _fail(
    state: _State, outcome: Outcome, headline: str, body: list[str], built: Built | None = None
) -> Decision:
    return Decision(
        outcome,
        False,
        headline,
        report=FailureReport(headline, body),
        warnings=tuple(state.warnings),
        built=built,
    )


def _decide(state: _State, built: Built, seed: int | None, shown: int) -> Decision:
    """Judge the settled build against the base record, then the working copy's."""
    mode = state.mode
    base = state.base
    if base is not None:
        refusal = _against_base(state, base, built)
        if refusal is not None:
            return refusal
    working = state.working
    if working is None and base is not None:
        return _deleted(state, base, built, seed, shown)
    if working is None:
        verdict = judge(None, built.facts, mode.update, mode.allow_unversioned, built.partial)
        return _finish(state, verdict, None, built, seed, shown)
    old = working.facts
    current = built.facts_in(old.format_version)
    update, unversioned = mode.update, mode.allow_unversioned
    verdict = judge(old, current, update, unversioned, built.partial, built.upstream)
    if old.format_version != FORMAT_VERSION and verdict.outcome is Outcome.UNCHANGED:
        return _migrate(state, working, built, seed, shown)
    if verdict.outcome is Outcome.UNCHANGED:
        return _reported(state, _keep(state, working, built, seed, shown, verdict))
    return _finish(state, verdict, working, built, seed, shown)


def _reported(state: _State, decision: Decision) -> Decision:
    """A passing check of a task that changed since the base under a greater version carries
    that change, for the reviewer's report."""
    reviewed = state.reviewed
    if reviewed is None or not decision.passes or decision.outcome is not Outcome.UNCHANGED:
        return decision
    return replace(
        decision,
        outcome=Outcome.REVIEWED,
        headline=reviewed.headline,
        report=reviewed.report,
        changed_docs=reviewed.changed_docs,
        version_before=reviewed.version_before,
    )


def _against_base(state: _State, base: Recorded, built: Built) -> Decision | None:
    """Content changed since the base while the version did not go up: refused."""
    old = base.facts
    current = built.facts_in(old.format_version)
    upstream = built.upstream
    verdict = judge(old, current, False, False, built.partial, upstream)
    order = version_order(old.version, current.version)
    ref = state.mode.base_ref or "the base"
    if order == 0 and verdict.content_changed and upstream_change(old, current, upstream):
        order = 1  # the harness's own config, changed by its upgrade: reviewed, not refused
    if order == 1 and verdict.content_changed:
        what = describe_change(verdict.docs, verdict.fields, [])
        versions = upgrade(old, current, upstream)
        change = (
            f"{upstream.name} {versions[0]} → {versions[1]} changed these prompts"
            if versions is not None and upstream is not None and old.version == current.version
            else f"version {old.version} -> {current.version}"
        )
        headline = f"{state.label}: {what} since {ref}; {change}"
        state.reviewed = Decision(
            Outcome.REVIEWED,
            True,
            headline,
            report=failure_report(
                Verdict(Outcome.REVIEWED, headline, docs=verdict.docs, fields=verdict.fields),
                normalise(base.text) if old.format_version >= 3 else None,
                built.text(old.docs_shown),
                built.block_of,
                state.mode.verbosity,
            ),
            built=built,
            changed_docs=len(verdict.docs.all) or 1,
            version_before=old.version,
            version_after=current.version,
        )
    if order == 1 or (order == 0 and not verdict.content_changed):
        return None
    what = describe_change(verdict.docs, verdict.fields, []) or "no content changed"
    if order == 0:
        why = f"without a version bump (still {current.version})"
        fix = f"bump the task's `version` above {old.version}, then run --snapshot-update"
    elif order is None:
        why = f"and version {old.version} -> {current.version} cannot be ordered"
        fix = "use versions that only go up"
    else:
        why = f"and its version went down ({old.version} -> {current.version})"
        fix = f"set a version greater than {old.version}, then run --snapshot-update"
    refused = "the update is refused: " if state.mode.update else ""
    headline = f"{state.label}: changed since {ref} {why}: {what}; {refused}{fix}"
    report = failure_report(
        Verdict(Outcome.BASE, headline, docs=verdict.docs, fields=verdict.fields),
        normalise(base.text) if old.format_version >= 3 else None,
        built.text(old.docs_shown),
        built.block_of,
        state.mode.verbosity,
    )
    return Decision(
        Outcome.BASE,
        False,
        headline,
        report=report,
        warnings=tuple(state.warnings),
        built=built,
        changed_docs=len(verdict.docs.all) or (1 if verdict.fields else 0),
        version_before=old.version,
        version_after=current.version,
    )


def _deleted(state: _State, base: Recorded, built: Built, seed: int | None, shown: int) -> Decision:
    """The base records this task, the working copy does not: a deleted snapshot fails; an
    update records it again (its content agrees with the base, or the version went up)."""
    ref = state.mode.base_ref or "the base"
    if state.mode.update and not built.partial:
        headline = f"{state.label}: its snapshot was deleted since {ref}; recording it again"
        return _write(state, Outcome.DELETED, headline, base, built, seed, shown)
    headline = (
        f"{state.label}: its snapshot exists at {ref} but was deleted; restore it "
        f"(git checkout {ref} -- {base.where.rpartition(' at ')[0] or base.where}), or record it "
        f"again with --snapshot-update (a changed prompt still needs a version bump)"
    )
    return _fail(state, Outcome.DELETED, headline, [])


def _write(
    state: _State,
    outcome: Outcome,
    headline: str,
    before: Recorded,
    built: Built,
    seed: int | None,
    shown: int,
) -> Decision:
    """Record this build in place of `before` (whose content it was judged against)."""
    return Decision(
        outcome,
        True,
        headline,
        write=built.text(shown),
        warnings=tuple(state.warnings),
        built=built,
        version_before=before.facts.version,
        version_after=built.facts.version,
        hash_seed=seed,
    )


def _migrate(
    state: _State, working: Recorded, built: Built, seed: int | None, shown: int
) -> Decision:
    """An older format whose content this run verified: rewritten by an update."""
    old = working.facts.format_version
    headline = (
        f"{state.label}: snapshot written in format {old}, this pytest-evaltasks writes format "
        f"{FORMAT_VERSION}; its content is verified unchanged"
    )
    if state.mode.update and not built.partial:
        return _write(
            state, Outcome.FORMAT, headline + "; rewriting it", working, built, seed, shown
        )
    advice = (
        "run without --evaltasks-max-samples to rewrite it"
        if built.partial
        else "this is not a prompt change: run --snapshot-update to rewrite it"
    )
    return _fail(state, Outcome.FORMAT, f"{headline}. {advice}", [], built)


def _keep(
    state: _State,
    working: Recorded,
    built: Built,
    seed: int | None,
    shown: int,
    verdict: Verdict,
) -> Decision:
    """Content unchanged: the docs shown must still read as this run lays them out (the rest of
    the file is what the gate compared); an update may lay it out anew."""
    mode, old = state.mode, working.facts
    checked = (built.size, old.num_docs) if built.partial else None
    common: dict[str, Any] = dict(
        warnings=tuple(state.warnings),
        built=built,
        version_before=old.version,
        version_after=built.facts.version,
        checked=checked,
        hash_seed=seed,
    )
    if built.partial:
        return Decision(Outcome.UNCHANGED, True, verdict.headline, **common)
    edited = recorded_shown_text(working.text) != built.shown_text(old.docs_shown)
    relaid = shown != old.docs_shown or old.hash_seed != seed
    unrecorded = sorted(set(built.reads) - set(old.inputs))
    if unrecorded and not mode.update:
        more = f" and {len(unrecorded) - 5} more" if len(unrecorded) > 5 else ""
        headline = (
            f"{state.label}: the files its code reads changed (now reads "
            f"{', '.join(unrecorded[:5])}{more}, which its snapshot does not record); its "
            f"prompts did not. Changed-only runs select tasks by these files: record them with "
            f"--snapshot-update"
        )
        return Decision(
            Outcome.INPUTS, False, headline, report=FailureReport(headline, []), **common
        )
    if mode.update and old.inputs != built.facts.inputs:
        return Decision(Outcome.INPUTS, True, verdict.headline, write=built.text(shown), **common)
    if edited and not mode.update:
        headline = (
            f"{state.label}: the snapshot file's text differs from what this run lays out, "
            f"though its content matches (edited by hand?); restore it, or rewrite it with "
            f"--snapshot-update"
        )
        report = failure_report(
            Verdict(Outcome.EDITED, headline),
            normalise(working.text),
            built.text(old.docs_shown),
            lambda label: None,
        )
        return Decision(Outcome.EDITED, False, headline, report=report, **common)
    if mode.update and (edited or relaid):
        outcome = Outcome.EDITED if edited else Outcome.UNCHANGED
        return Decision(outcome, True, verdict.headline, write=built.text(shown), **common)
    return Decision(Outcome.UNCHANGED, True, verdict.headline, **common)


def _finish(
    state: _State,
    verdict: Verdict,
    working: Recorded | None,
    built: Built,
    seed: int | None,
    shown: int,
) -> Decision:
    """A verdict of the gate, with its write or its report."""
    old = working.facts if working is not None else None
    warnings = [*state.warnings, *verdict.warnings]
    changed = len(verdict.docs.all) or (1 if verdict.fields else 0)
    common: dict[str, Any] = dict(
        built=built,
        changed_docs=changed,
        version_before=old.version if old is not None else None,
        version_after=built.facts.version,
        hash_seed=seed,
    )
    if verdict.record:
        return Decision(
            verdict.outcome,
            True,
            verdict.headline,
            write=built.text(shown),
            warnings=tuple(warnings),
            **common,
        )
    if verdict.passes:
        return Decision(verdict.outcome, True, verdict.headline, warnings=tuple(warnings), **common)
    old_text = (
        normalise(working.text)
        if working is not None and old is not None and old.format_version >= 3
        else None
    )
    report = failure_report(
        verdict,
        old_text,
        built.text(old.docs_shown if old is not None else shown),
        built.block_of,
        state.mode.verbosity,
    )
    return Decision(
        verdict.outcome,
        False,
        verdict.headline,
        report=report,
        warnings=tuple(warnings),
        **common,
    )
