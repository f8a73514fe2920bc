"""pytest nodes: one virtual collector under the session, one item per planned check.

`TaskItem` builds a task, fingerprints it, asks the gate, and then passes, writes, or fails with
a report a reviewer can read. `ModuleItem` fails for a task module that cannot be imported, and
`OrphanItem` for a snapshot file that no task owns (it deletes it under `--snapshot-update`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from ..engine.collection import checkpoint, long_lived
from ..errors import EvalTaskError
from ..files import holds
from ..lint.rules import IGNORE_VARIABLE
from ..snapshot.built import BuiltSnapshot
from ..snapshot.check import CheckMode, Decision, RecordedInput, check
from ..snapshot.failure import FailureReport
from ..snapshot.gate import Outcome
from ..snapshot.parse import SnapshotFileError
from ..snapshot.storage import decode, read_snapshot_text
from ..snapshot.syrupy_extension import write_snapshot
from .builds import FreshBuild, build_here, lint_of, other_seed
from .context import RunContext
from .lookahead import Checked, Lookahead
from .plan import Orphan
from .summary import RESULT_KEY, ItemResult

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr  # private; see `_failure_repr`

    from ..engine.registry import BrokenModule, Unusable
    from ..engine.task_string import TaskRequest


class ItemsRun(Protocol):
    """What the items read of their session (`session.EvalTasksSession`)."""

    context: RunContext
    lookahead: Lookahead | None

    def finished(self, nodeid: str, result: ItemResult) -> None:
        """An item of this process finished with `result`."""
        ...


RUN_KEY: pytest.StashKey[ItemsRun] = pytest.StashKey()
"""Where the items find their session (set by it)."""
DETAILS_CAP = 80
"""Lines of a failure kept in the item's result for the Markdown report."""


class EvalTasksWarning(pytest.PytestWarning):
    """Something a task author should look at that does not fail the run."""


class EvalTasksLintWarning(EvalTasksWarning):
    """A lint finding in a task's prompts (`evaltasks_lint = warn`)."""


class CheckFailed(Exception):
    """A check failed: a headline for summaries, and the body of the report."""

    def __init__(self, report: FailureReport) -> None:
        super().__init__(report.headline)
        self.report = report


class _ItemObject:
    """What syrupy's location reads from `item.obj`: a module and a name."""

    def __init__(self, name: str) -> None:
        self.__module__ = __name__
        self.__name__ = name


class CheckItem(pytest.Item):
    """What every evaltasks item shares: a result on its report, and readable failures."""

    source_line: int = 0

    def _start(self, kind: str) -> ItemResult:
        """A result recorded on the report however the item ends (as `error` until decided)."""
        return ItemResult(label=self.name, kind=kind)

    def _finish(self, result: ItemResult) -> None:
        """Attach the result to the report, as JSON (what an xdist worker sends its controller,
        and JUnit XML records), and hand the result itself to this process's collector, which
        takes it with the call's report. The result is never kept on the item: a corpus-sized
        run keeps every item until the session ends, and an attribute added after construction
        also costs each item a dict of its own."""
        self.user_properties.append((RESULT_KEY, result.to_json()))
        self.config.stash[RUN_KEY].finished(self.nodeid, result)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | TerminalRepr:
        """A headline for summaries and `--tb=line`, then the report: no pytest traceback."""
        error = excinfo.value
        if isinstance(error, CheckFailed):
            return _failure_repr(self, error.report)
        if isinstance(error, EvalTaskError):
            return _failure_repr(self, engine_failure(error))
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        """Point at the line of the file the item checks."""
        return self.path, max(self.source_line - 1, 0), f"evaltask {self.name}"

    def warn_here(self, message: str, category: type[Warning] = EvalTasksWarning) -> None:
        """A warning pointing at the item's file and line (never at this module).

        Under `-W error` (or `filterwarnings = error`) the warning fails the item with its
        message, not with a traceback through this plugin.
        """
        try:
            warnings.warn_explicit(
                category(message), category, str(self.path), max(self.source_line, 1)
            )
        except Warning as raised:
            raise CheckFailed(
                FailureReport(
                    f"{self.name}: {raised} (a warning, turned into an error by the warning "
                    f"filters)",
                    [],
                )
            ) from None


class TaskItem(CheckItem):
    """Build a task's docs, render every prompt, and check the snapshot and version gate.

    The decision is `snapshot.check`'s; the item hands it the files and the builds, writes
    what it says (and verifies the write), lints, warns, and fails with its report.
    """

    def __init__(
        self,
        *,
        request: TaskRequest,
        rendering: str,
        source: Path,
        line: int,
        snapshot_dir: Path,
        snapshot_name: str,
        **kwargs: Any,
    ) -> None:
        super().__init__(path=source, **kwargs)
        self.request = request
        self.rendering = rendering
        self.source_line = line
        self._snapshot_dir = snapshot_dir  # one object for the run's items
        self._snapshot_name = snapshot_name

    @property
    def snapshot_path(self) -> Path:
        """The item's snapshot file. Made when asked for: a corpus-sized run keeps every item
        until the session ends, and a path object per item would cost a few hundred bytes."""
        return self._snapshot_dir / self._snapshot_name

    @property
    def obj(self) -> _ItemObject:
        """What syrupy's location reads (made when asked for, as `snapshot_path`)."""
        return _ItemObject(self.name)

    def runtest(self) -> None:
        """Build, judge against the recorded snapshots, then pass, write, or fail. An item the
        run's look-ahead process already checked and found passing takes that result."""
        session = self.config.stash[RUN_KEY]
        context = session.context
        ahead = session.lookahead
        checked = ahead.take(self) if ahead is not None else None
        result = checked.result if checked is not None else self._start("task")
        try:
            with long_lived():  # a large task's docs are not rescanned by every full collection
                if checked is not None:
                    self._conclude(context, checked.warnings, result.lint)
                else:
                    self._check(context, result)
        finally:
            self._finish(result)

    def decide(self, context: RunContext, result: ItemResult, builds: _Builds) -> Decision:
        """The check's decision for this item, with what it found copied onto `result` (no
        file written, no lint run): what the item and the look-ahead process both do."""
        options = context.options
        recorded = self._recorded(context)
        new_only = options.update_new_only and recorded.text is None and recorded.error is None
        mode = CheckMode(
            update=options.update or new_only,
            allow_unversioned=options.allow_unversioned,
            docs_shown=options.run.docs_shown,
            verbosity=self.config.get_verbosity(),
            base_ref=context.base.ref if context.base is not None else None,
        )
        result.snapshot = recorded.where
        decision = check(self.name, recorded, self._base(context), builds, mode)
        result.outcome = decision.outcome
        result.changed_docs = decision.changed_docs
        result.version_before = decision.version_before
        result.version_after = decision.version_after
        result.headline = decision.headline
        if decision.built is not None:
            result.docs = decision.built.size
            checkpoint(decision.built.size)
        if decision.checked is not None:
            result.checked, result.recorded_docs = decision.checked
        if decision.passes and decision.report is not None:
            result.details = decision.report.body[:DETAILS_CAP]  # a reviewed change, reported
        return decision

    def check_ahead(self, context: RunContext) -> Checked | None:
        """This item's check as the look-ahead process makes it: its result when it passes
        with nothing to write, from a build made here; else None (the item checks itself)."""
        result = self._start("task")
        try:
            decision = self.decide(context, result, _BuildsHereOnly(self, context))
        except _NotHere:
            return None
        if not decision.passes or decision.write is not None:
            return None
        self.lint_findings(context, decision, result)
        return Checked(result, decision.warnings)

    def _check(self, context: RunContext, result: ItemResult) -> None:
        decision = self.decide(context, result, _Builds(self, context))
        if context.options.export is not None:
            self._export(context, decision)
        if decision.write is not None:
            self._write(decision.write, result)
        findings = self.lint_findings(context, decision, result)
        if not decision.passes:
            assert decision.report is not None
            report = decision.report
            if findings:
                report = FailureReport(
                    report.headline, [*report.body, "lint findings:", *(f"  {f}" for f in findings)]
                )
            result.details = report.body[:DETAILS_CAP]
            raise CheckFailed(report)
        self._conclude(context, decision.warnings, findings)

    def _conclude(
        self, context: RunContext, messages: Sequence[str], findings: Sequence[str]
    ) -> None:
        """A passing check's end: its warnings (after any write: `-W error` must not undo it),
        then its lint findings, as warnings or (`evaltasks_lint = error`) a failure."""
        for message in messages:
            self.warn_here(message)
        if findings and context.options.lint == "error":
            raise CheckFailed(
                FailureReport(
                    f"{self.name}: {len(findings)} lint finding(s) (evaltasks_lint = error)",
                    [f"  {line}" for line in findings]
                    + [
                        f"silence a rule for this task with `{IGNORE_VARIABLE} = "
                        f"{{{self.request.name!r}: [RULE]}}` in its task module"
                    ],
                )
            )
        for line in findings:
            self.warn_here(f"lint {line}", EvalTasksLintWarning)

    def _export(self, context: RunContext, decision: Decision) -> None:
        """`--evaltasks-export`: this item's docs as JSON lines, for its call report. The build
        the check used; one made here when the check made none in this process (an unreadable
        snapshot, a task built in a fresh process under a fixed hash seed)."""
        from .export import LINES_KEY, export_lines

        built = decision.built
        if not isinstance(built, BuiltSnapshot):
            try:
                built = _Builds(self, context).here()
            except EvalTaskError:
                return  # the item fails or is reported for its own reason; nothing to export
        self.stash[LINES_KEY] = export_lines(self.name, self.rendering, self.request, built)

    def _where(self, context: RunContext) -> str:
        """The snapshot file as messages name it: relative to the root when inside it (the
        folder is resolved once per run, not once per item)."""
        return f"{context.snapshot_folder_shown}/{self._snapshot_name}"

    def _recorded(self, context: RunContext) -> RecordedInput:
        """The working copy's snapshot file, as found."""
        where = self._where(context)
        try:
            text = read_snapshot_text(self.snapshot_path, where)
        except SnapshotFileError as exc:
            return RecordedInput(where, None, exc)
        return RecordedInput(where, text)

    def _base(self, context: RunContext) -> RecordedInput | None:
        """The same file at `--evaltasks-base`, when given."""
        base = context.base
        if base is None:
            return None
        name = self._snapshot_name
        where = base.where(name)
        raw = base.files.get(name)
        if raw is None:
            return RecordedInput(where, None)
        try:
            return RecordedInput(where, decode(raw, where))
        except SnapshotFileError as exc:
            return RecordedInput(where, None, exc)

    def lint_findings(
        self, context: RunContext, decision: Decision, result: ItemResult
    ) -> list[str]:
        """The lint findings of the build the decision used (none when lint is off)."""
        built = decision.built
        if context.options.lint == "off" or built is None:
            return []
        if isinstance(built, FreshBuild):
            lines = list(built.lint)
        else:
            assert isinstance(built, BuiltSnapshot)
            lines = lint_of(
                context.registry,
                built,
                self.request.name,
                decision.hash_seed is not None,
                context.options.lint_ignore,
            )
        result.lint = lines
        return lines

    def _write(self, text: str, result: ItemResult) -> None:
        """Record `text` through syrupy, then check that the file holds it byte for byte: a
        write that did not land fails the item, naming the file and the cause."""
        data = text.encode("utf-8")
        failure = write_snapshot(self, text)
        if failure is None:
            try:
                landed = holds(self.snapshot_path, data)
            except OSError as exc:
                failure = str(exc)
                landed = False
            if landed:
                result.written = True
                return
            failure = failure or "the file does not hold what was written"
        raise CheckFailed(
            FailureReport(
                f"{self.name}: the snapshot could not be written to {self.snapshot_path}: "
                f"{failure}; the old file (if any) is unchanged",
                [],
            )
        )


class _Builds:
    """The builds `check` asks for, for one item: here, or in a fresh process."""

    def __init__(self, item: TaskItem, context: RunContext) -> None:
        self.item = item
        self.context = context

    def here(self) -> BuiltSnapshot:
        """Build the task in this process (a second call builds it again)."""
        context = self.context
        rendering = context.rendering(self.item.rendering)
        return build_here(
            context.registry,
            self.item.request,
            rendering.run,
            rendering.template,
            context.root,
            context.within,
            label=self.item.name,
        )

    def fresh(
        self, hash_seed: int, docs_shown: int, older: tuple[int, ...], elsewhere: bool = False
    ) -> FreshBuild:
        """Build the task in a fresh process under `hash_seed` (`elsewhere`: as on another
        machine)."""
        context = self.context
        module = context.registry.origin_of(self.item.request.name)
        rendering = context.rendering(self.item.rendering)
        return context.fresh.build(
            module, self.item.name, hash_seed, docs_shown, rendering, older, elsewhere
        )

    @property
    def other_seed(self) -> int:
        """A hash seed other than this process's."""
        return other_seed()


class _NotHere(Exception):
    """The check asked the look-ahead process for a fresh-process build."""


class _BuildsHereOnly(_Builds):
    """The look-ahead process's builds: in this process only. A check that needs a fresh
    process (a change to confirm, a record made under a fixed hash seed) is left to the item."""

    def fresh(
        self, hash_seed: int, docs_shown: int, older: tuple[int, ...], elsewhere: bool = False
    ) -> FreshBuild:
        raise _NotHere


class ModuleItem(CheckItem):
    """A task module that failed to import: its tasks are unknown, so the run fails."""

    def __init__(self, *, module: BrokenModule, **kwargs: Any) -> None:
        super().__init__(path=module.path, **kwargs)
        self.module = module

    def runtest(self) -> None:
        """Fail with the import error."""
        result = self._start("module")
        result.headline = f"task module {self.name} failed to import"
        try:
            held = self.config.stash[RUN_KEY].context.plan.held
            note = (
                [
                    f"{len(held)} snapshot file(s) of tasks that are not registered may be its "
                    f"tasks'; they are not checked until it imports: "
                    + ", ".join(orphan.path.name for orphan in held[:5])
                    + (" ..." if len(held) > 5 else ""),
                    "",
                ]
                if held
                else []
            )
            report = FailureReport(
                f"{result.headline}; its tasks are not checked. Fix the error (or keep "
                f"the file out of the task folder):",
                [*note, *self.module.error.rstrip().split("\n")],
            )
            result.details = self._tail(report.body, DETAILS_CAP)  # the exception is last
            raise CheckFailed(report)
        finally:
            self._finish(result)

    @staticmethod
    def _tail(lines: list[str], cap: int) -> list[str]:
        """At most `cap` lines: the first, a note of the cut, and the last ones (where a
        traceback names its exception)."""
        if len(lines) <= cap:
            return list(lines)
        kept = cap - 2
        return [lines[0], f"... {len(lines) - 1 - kept} lines cut ...", *lines[-kept:]]


class UnusableItem(CheckItem):
    """A task name no request may use (defined twice, or not expressible in a task string)."""

    def __init__(self, *, unusable: Unusable, **kwargs: Any) -> None:
        super().__init__(path=unusable.paths[0] if unusable.paths else Path("."), **kwargs)
        self.unusable = unusable

    def runtest(self) -> None:
        """Fail with the reason."""
        result = self._start("task")
        result.headline = f"task {self.name!r} {self.unusable.reason}"
        try:
            raise CheckFailed(FailureReport(result.headline, []))
        finally:
            self._finish(result)


class OrphanItem(CheckItem):
    """A snapshot file that belongs to no registered task."""

    def __init__(self, *, orphan: Orphan, **kwargs: Any) -> None:
        super().__init__(path=orphan.path, **kwargs)
        self.orphan = orphan

    def runtest(self) -> None:
        """Fail, or under `--snapshot-update` delete the file when no task module is broken."""
        context = self.config.stash[RUN_KEY].context
        result = self._start("orphan")
        result.outcome = Outcome.ORPHAN
        result.snapshot = self.name
        result.headline = f"orphan snapshot {self.name}: it {self.orphan.reason}"
        try:
            self._check(context, result)
        finally:
            self._finish(result)

    def _check(self, context: RunContext, result: ItemResult) -> None:
        label = self.orphan.label
        result.details = [
            f"snapshot file: {self.name}",
            f"records task: {label!r}" if label is not None else "records no readable task",
            f"why it is an orphan: it {self.orphan.reason}",
        ]
        if context.plan.broken:
            result.details.append(
                f"{len(context.plan.broken)} task module(s) failed to import in this run; one "
                f"of them may define its task"
            )
        if context.options.update and self.orphan.label is not None:
            if context.options.no_cleanup:
                result.details.append("kept: --snapshot-no-cleanup")
                self.warn_here(f"{result.headline}; kept (--snapshot-no-cleanup)")
                return
            if context.plan.broken:
                result.details.append("not deleted by --snapshot-update, for that reason")
                self._unused(
                    context,
                    f"{result.headline}; not deleted, because a task module failed to import "
                    f"and may own it",
                )
                return
            self.orphan.path.unlink(missing_ok=True)
            result.deleted = True
            return
        advice = (
            "delete it by hand (it is not a snapshot this version can read)"
            if self.orphan.label is None
            else "restore its task (a renamed task, a module that no longer defines it or "
            "whose table is misspelt, a config removed by mistake); if the task is gone for good, "
            "delete the snapshot with --snapshot-update"
        )
        result.details.append(f"what to do: {advice}")
        self._unused(context, f"{result.headline}; {advice}")

    def _unused(self, context: RunContext, message: str) -> None:
        """Fail, as syrupy fails a run with unused snapshots; under syrupy's
        `--snapshot-warn-unused`, warn instead (the item passes)."""
        if context.options.warn_unused:
            self.warn_here(f"{message} (--snapshot-warn-unused: a warning, not a failure)")
            return
        raise CheckFailed(FailureReport(message, []))


def engine_failure(error: EvalTaskError) -> FailureReport:
    """An engine error with the cause it carries (e.g. the prompt function's traceback)."""
    import traceback

    message = str(error)
    headline, _, rest = message.partition("\n")
    body = rest.split("\n") if rest else []
    cause = error.__cause__
    if cause is not None:
        body += ["", "caused by:"]
        body += [
            line.rstrip("\n")
            for line in traceback.format_exception(type(cause), cause, cause.__traceback__)
        ]
    return FailureReport(f"{type(error).__name__}: {headline}", body)


def _failure_repr(item: CheckItem, report: FailureReport) -> TerminalRepr:
    """pytest's own failure shape with our text: `--tb=line` and the short summary then show
    the headline alone, and xdist carries it to the controller intact.

    Private pytest API, kept (with the `TerminalRepr` annotation above): pytest exports no
    failure representation. A plain `str` loses the short summary's message (it reads
    `longrepr.reprcrash`), and `pytest.fail(..., pytrace=False)` prefixes it with "Failed: "
    and points it at this file. pyproject.toml pins pytest to the majors tox tests (8 and 9).
    """
    from _pytest._code.code import ReprExceptionInfo, ReprFileLocation, ReprTracebackNative

    crash = ReprFileLocation(str(item.path), max(item.source_line, 1), report.headline)
    if item.config.getoption("tbstyle", "auto") == "line":
        text = ""  # pytest prints the crash line itself: nothing more
    else:
        text = "\n".join([report.headline, *report.body]) + "\n"
    return ReprExceptionInfo(reprtraceback=ReprTracebackNative([text]), reprcrash=crash)
