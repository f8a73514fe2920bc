"""pytest nodes: one virtual collector under the session, one item per planned check.

`TaskItem` builds a task, fingerprints it, asks the gate, and then passes, writes, or fails with
a report a reviewer can read. `ModuleItem` fails for a task module that cannot be imported, and
`OrphanItem` for a snapshot file that no task owns (it deletes it under `--snapshot-update`).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..engine.collection import checkpoint, long_lived
from ..errors import EvalTaskError
from ..lint.rules import IGNORE_VARIABLE, RULES, ignored_rules, lint, unknown_rules
from ..snapshot.failure import FailureReport, failure_report
from ..snapshot.format import (
    DEFAULT_DOCS_SHOWN,
    BuiltSnapshot,
    SnapshotFacts,
    SnapshotFileError,
    build_snapshot,
    normalise,
    recorded_shown_text,
)
from ..snapshot.gate import Outcome, Verdict, ids, judge
from ..snapshot.storage import Recorded, read_recorded, snapshot_filename
from ..snapshot.syrupy_extension import assert_snapshot
from .state import CONTEXT_KEY, RunContext
from .summary import RESULT_KEY, ItemResult

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

    from ..engine.registry import BrokenModule, Unusable
    from ..engine.task_string import TaskRequest
    from .plan import Orphan

COLLECTOR_NAME = "evaltasks"
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


class EvalTasksCollector(pytest.Collector):
    """The one virtual collector that yields an item per planned check."""

    def __init__(self, *, context: RunContext, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.context = context

    def collect(self) -> list[pytest.Item]:
        """Tasks in the order the task string asked for them, then modules, then orphans."""
        context = self.context
        root = self.config.rootpath
        items: list[pytest.Item] = []
        registry = context.registry
        for request in context.plan.requests:
            source, line = registry.location(request.name)
            items.append(
                TaskItem.from_parent(
                    self,
                    name=request.label,
                    request=request,
                    source=source,
                    line=line,
                    snapshot_path=context.options.snapshot_dir / snapshot_filename(request.label),
                )
            )
        for unusable in context.plan.unusable:
            items.append(UnusableItem.from_parent(self, name=unusable.name, unusable=unusable))
        for module in context.plan.broken:
            items.append(
                ModuleItem.from_parent(self, name=_relative(module.path, root), module=module)
            )
        for orphan in context.plan.orphans:
            items.append(
                OrphanItem.from_parent(self, name=_relative(orphan.path, root), orphan=orphan)
            )
        wanted = set(context.options.node_ids)
        if wanted and context.options.specs:
            items = [item for item in items if item.name in wanted]
        for item in items:
            item.add_marker("evaltask")
            item.extra_keyword_matches.add(item.name.replace("|", "/"))
        return items


def _relative(path: Path, root: Path) -> str:
    """`path` relative to the root directory when inside it, as a node name."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


class CheckItem(pytest.Item):
    """What every evaltasks item shares: a result on its report, and readable failures."""

    source_line: int = 0

    def _start(self, kind: str) -> ItemResult:
        """A result recorded on the report however the item ends (as `error` until decided)."""
        result = ItemResult(label=self.name, kind=kind)
        self._result = result
        return result

    def _finish(self) -> None:
        """Attach the result to the report, as JSON."""
        result = getattr(self, "_result", None)
        if result is not None:
            self.user_properties.append((RESULT_KEY, result.to_json()))

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
    """Build a task's docs, render every prompt, and check the snapshot and version gate."""

    def __init__(
        self,
        *,
        request: TaskRequest,
        source: Path,
        line: int,
        snapshot_path: Path,
        **kwargs: Any,
    ) -> None:
        super().__init__(path=source, **kwargs)
        self.request = request
        self.source_line = line
        self.snapshot_path = snapshot_path
        self.obj = _ItemObject(self.name)

    def runtest(self) -> None:
        """Build, judge against the recorded snapshot, then pass, write, or fail."""
        result = self._start("task")
        try:
            with long_lived():  # a large task's docs are not rescanned by every full collection
                self._check(result)
        finally:
            self._finish()

    def _check(self, result: ItemResult) -> None:
        context: RunContext = self.config.stash[CONTEXT_KEY]
        options = context.options
        built = self._build(context)
        checkpoint(built.size)
        result.docs = built.size
        try:
            recorded = read_recorded(self.snapshot_path)
        except SnapshotFileError as exc:
            raise CheckFailed(FailureReport(str(exc), [])) from None
        old = recorded.facts if recorded is not None else None
        verdict = judge(old, built.facts, options.update, options.allow_unversioned)
        result.outcome = verdict.outcome
        result.changed_docs = len(verdict.docs.all)
        result.version_before = old.version if old is not None else None
        result.version_after = built.facts.version
        result.headline = verdict.headline
        if verdict.content_changed or (verdict.outcome is Outcome.NEW and options.update):
            first = built.facts
            del built  # its docs go before the second build's come
            built = self._built_again(context, first)
        shown = options.run.docs_shown
        recorded_shown = old.docs_shown if old is not None else DEFAULT_DOCS_SHOWN
        if verdict.record:
            self._write(built.text(recorded_shown if shown is None else shown), result)
        elif verdict.passes:
            self._keep(recorded, built, recorded_shown, shown, result, options.update)
        else:
            report = self._report(verdict, recorded, built, recorded_shown)
            result.details = report.body[:DETAILS_CAP]
            self._lint(context, built, result)
            raise CheckFailed(report)
        self._warn(verdict)
        findings = self._lint(context, built, result)
        if findings and options.lint == "error":
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

    def _lint(self, context: RunContext, built: BuiltSnapshot, result: ItemResult) -> list[str]:
        """The lint findings of this run's docs (none when lint is off), kept in the result."""
        if context.options.lint == "off":
            return []
        ignored = ignored_rules(context.registry.module_of(self.request.name), self.request.name)
        lines = [finding.describe() for finding in lint(built.result, ignored)]
        lines += [
            f"unknown lint rule {rule!r} in {IGNORE_VARIABLE} (known: {', '.join(RULES)})"
            for rule in unknown_rules(ignored)
        ]
        result.lint = lines
        return lines

    def _build(self, context: RunContext) -> BuiltSnapshot:
        """This run's task, fingerprinted."""
        task = context.registry.make_task(self.request)
        result = task.build(context.options.run.max_samples)
        checkpoint(len(result.docs))
        return build_snapshot(task, result, context.options.run, context.template)

    def _built_again(self, context: RunContext, first: SnapshotFacts) -> BuiltSnapshot:
        """Build the task a second time: a change that is not reproducible is not a change.

        Only the first build's facts are kept meanwhile (the caller lets go of its docs), and
        the second build, equal to the first, is the one used from here on: a large task's
        docs are never in memory twice.
        """
        again = self._build(context)
        hashes = again.facts.doc_hashes
        differ = [
            label for label, digest in first.doc_hashes.items() if hashes.get(label) != digest
        ]
        if not differ:
            return again
        raise CheckFailed(
            FailureReport(
                f"{self.name}: nondeterministic prompt function: two builds in the same run "
                f"differ in {len(differ)} docs ({ids(differ)})",
                [
                    "The prompt function (or its hf_filter) gives different docs for the same "
                    "rows on each build, so no snapshot can hold its prompts.",
                    "Draw randomness only from the global `random` or `numpy.random` "
                    "(seeded to 1234 while a task is built, as lighteval seeds them), or from a "
                    "generator with a fixed seed.",
                ],
            )
        )

    def _write(self, text: str, result: ItemResult) -> None:
        """Record `text` through syrupy (an atomic write)."""
        assert_snapshot(self, text, update=True)
        result.written = True

    def _keep(
        self,
        recorded: Recorded | None,
        built: BuiltSnapshot,
        recorded_shown: int,
        shown: int | None,
        result: ItemResult,
        update: bool,
    ) -> None:
        """Content unchanged: check that the docs shown still read as this run lays them out
        (the rest of the file is what the gate compared)."""
        assert recorded is not None
        if recorded_shown_text(recorded.text) != built.shown_text(recorded_shown):
            result.outcome = Outcome.EDITED
            if update:
                self._write(built.text(recorded_shown if shown is None else shown), result)
                return
            raise CheckFailed(
                failure_report(
                    Verdict(
                        Outcome.EDITED,
                        f"{self.name}: the snapshot file's text differs from what this run lays "
                        f"out, though its content matches (edited by hand?); restore it, or "
                        f"rewrite it with --snapshot-update",
                    ),
                    normalise(recorded.text),
                    built.text(recorded_shown),
                    lambda label: None,
                )
            )
        if update and shown is not None and shown != recorded_shown:
            self._write(built.text(shown), result)  # a new layout: presentation only

    def _report(
        self, verdict: Verdict, recorded: Recorded | None, built: BuiltSnapshot, shown: int
    ) -> FailureReport:
        """The readable failure, comparing texts laid out alike."""

        def block_of(label: str) -> str | None:
            position = built.position_of(label)
            return built.doc_block(position) if position is not None else None

        old_text = normalise(recorded.text) if recorded is not None else None
        return failure_report(
            verdict, old_text, built.text(shown), block_of, self.config.get_verbosity()
        )

    def _warn(self, verdict: Verdict) -> None:
        """Warnings come last, after any write: `-W error` must not undo a recorded snapshot."""
        for message in verdict.warnings:
            self.warn_here(message)


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
            raise CheckFailed(
                FailureReport(
                    f"{result.headline}; its tasks are not checked. Fix the error (or keep "
                    f"the file out of the task folder):",
                    self.module.error.rstrip().split("\n"),
                )
            )
        finally:
            self._finish()


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
            self._finish()


class OrphanItem(CheckItem):
    """A snapshot file that belongs to no registered task."""

    def __init__(self, *, orphan: Orphan, **kwargs: Any) -> None:
        super().__init__(path=orphan.path, **kwargs)
        self.orphan = orphan

    def runtest(self) -> None:
        """Fail, or under `--snapshot-update` delete the file when no task module is broken."""
        context: RunContext = self.config.stash[CONTEXT_KEY]
        result = self._start("orphan")
        result.outcome = Outcome.ORPHAN
        result.headline = f"orphan snapshot {self.name}: it {self.orphan.reason}"
        try:
            self._check(context, result)
        finally:
            self._finish()

    def _check(self, context: RunContext, result: ItemResult) -> None:
        if context.options.update and self.orphan.label is not None:
            if context.plan.broken:
                raise CheckFailed(
                    FailureReport(
                        f"{result.headline}; not deleted, because a task module failed to "
                        f"import and may own it",
                        [],
                    )
                )
            self.orphan.path.unlink(missing_ok=True)
            result.deleted = True
            return
        advice = (
            "delete it by hand (it is not a snapshot this version can read)"
            if self.orphan.label is None
            else "delete it with --snapshot-update, or restore its task"
        )
        raise CheckFailed(FailureReport(f"{result.headline}; {advice}", []))


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
    the headline alone, and xdist carries it to the controller intact."""
    from _pytest._code.code import ReprExceptionInfo, ReprFileLocation, ReprTracebackNative

    crash = ReprFileLocation(str(item.path), max(item.source_line, 1), report.headline)
    if item.config.getoption("tbstyle", "auto") == "line":
        text = ""  # pytest prints the crash line itself: nothing more
    else:
        text = "\n".join([report.headline, *report.body]) + "\n"
    return ReprExceptionInfo(reprtraceback=ReprTracebackNative([text]), reprcrash=crash)
