"""`EvalTasksSession`: the plugin's side of a pytest session that asks for tasks.

`hooks.pytest_configure` registers one only when the options ask for tasks (`--evaltasks`,
`--evaltasks-changed` or `evaltasks::` node ids), so every other pytest run pays for nothing but
the options. It owns what the run works out once (`context.RunContext`), the results as their
reports arrive (`summary.Collected`), the export (registered as a plugin of its own only when
asked for), the look-ahead process and the process's role (an xdist worker hands its results on;
the controller, or the only process, reports and writes).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .context import LABELS_INPUT, start_context
from .startup import is_worker, shown
from .summary import RESULT_KEY, Collected, ItemResult, Selection, count

if TYPE_CHECKING:
    from .context import RunContext
    from .export import Exporter
    from .lookahead import Lookahead
    from .options import Options

RESULTS_PROBLEMS = "evaltasks-results-problems"
REPORT_PROBLEMS = "evaltasks-report-problems"


class EvalTasksSession:
    """One session's tasks: the hooks of a run that checks them, delegating to the layers."""

    def __init__(self, config: pytest.Config, context: RunContext) -> None:
        self.config = config
        self.context = context
        self.worker = is_worker(config)
        options = context.options
        every = options.report is not None or options.results is not None or options.details
        self.collected = Collected(keep=every and not self.worker)
        self.exporter: Exporter | None = None
        self.lookahead: Lookahead | None = None
        if options.export is not None:  # registered only when asked for: other runs pay nothing
            from .export import EXPORT_PLUGIN, Exporter

            requests = context.plan.requests
            order = {request.key: position for position, request in enumerate(requests)}
            keys = [rendering.key for rendering in context.renderings]
            self.exporter = Exporter(options.export, order, keys, not self.worker)
            config.pluginmanager.register(self.exporter, EXPORT_PLUGIN)

    @classmethod
    def start(cls, config: pytest.Config, options: Options) -> EvalTasksSession:
        """Work out the run (a mistake is a usage error); the items find it in the stash."""
        from .items import RUN_KEY

        session = cls(config, start_context(config, options))
        config.stash[RUN_KEY] = session
        return session

    # collection -------------------------------------------------------------------------------

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        """Say up front what will be checked, against which snapshots and data."""
        return header_lines(self.context)

    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        """With no test paths named, collect only the task items."""
        if config.args_source != pytest.Config.ArgsSource.ARGS:
            return True
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """Add the task items first, so `-k`, `-m` and `--lf` then select among them."""
        from .collector import COLLECTOR_NAME, EvalTasksCollector

        collector = EvalTasksCollector.from_parent(
            session, name=COLLECTOR_NAME, nodeid=COLLECTOR_NAME, context=self.context
        )
        collected = collector.collect()
        items[:0] = collected
        # Tell the terminal (and `--collect-only`) about them, as a real collector's report would.
        report = pytest.CollectReport(collector.nodeid, "passed", None, list(collected))
        session.ihook.pytest_collectreport(report=report)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """pytest-xdist's controller, starting a worker: hand it this run's snapshot labels."""
        if self.context.labels is not None:
            node.workerinput[LABELS_INPUT] = self.context.labels

    # the run ----------------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        """Fork the look-ahead process over the run's task items, when the run allows it."""
        if self.config.option.collectonly:
            return
        from .items import TaskItem
        from .lookahead import Lookahead, conditions_of, refusal

        tasks = [item for item in session.items if isinstance(item, TaskItem)]
        if refusal(conditions_of(self.config, self.context, len(tasks))) is None:
            self.lookahead = Lookahead.start(tasks, self.context)

    def finished(self, nodeid: str, result: ItemResult) -> None:
        """An item of this process finished with `result`: its call report takes it."""
        self.collected.finished[nodeid] = result

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Record an item's result with its call-phase report: the result the item finished
        in this process, or, for an xdist worker's report, the one its JSON carries."""
        if report.when != "call":
            return
        collected = self.collected
        result = collected.finished.pop(report.nodeid, None)
        if result is not None:
            collected.add(result, report.outcome)
            return
        for key, value in report.user_properties:
            if key == RESULT_KEY and isinstance(value, str):
                collected.add(ItemResult.from_json(value), report.outcome)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """End the fresh build processes and the look-ahead; on the controller (or the only
        process), write the export, the Markdown report and the results file."""
        context = self.context
        context.fresh.close()
        if self.lookahead is not None:
            self.lookahead.close()
        nothing = exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED
        if nothing and (context.nothing_changed or self._empty_shard()):
            session.exitstatus = pytest.ExitCode.OK  # nothing to check is a success here
        if self.worker:
            return
        if self.exporter is not None:
            self.exporter.write()
            if self.exporter.problem is not None and session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED  # a stale or missing file
        options = context.options
        if options.report is None and options.results is None:
            return
        from .report import publish, show_problems

        selection = selection_of(context)
        if options.report is not None:
            outcomes = {result.label: outcome for result, outcome in self.collected.kept}
            summary = self.collected.summary()
            problems = publish(options.report, summary, outcomes, selection)
            if problems:  # checked before the run, so rare: said, the exit code kept
                show_problems(self.config, problems, REPORT_PROBLEMS)
        if options.results is not None:
            self._write_results(session, options.results, selection)

    def _empty_shard(self) -> bool:
        """A pytest-split group (`--splits N --group I`) of a run with items, given none."""
        option = self.config.option
        split = getattr(option, "splits", None) and getattr(option, "group", None)
        return bool(split) and self.context.plan.size > 0

    def _write_results(self, session: pytest.Session, path: Path, selection: Any) -> None:
        """`--evaltasks-results`: write the results file. A write that failed fails a run that
        passed: a shard's file missing from the merge, or an older one in its place, would be
        wrong."""
        from .report import show_problems
        from .results import shard_of, write

        problem = write(path, selection, self.collected.kept, shard_of(self.config))
        if problem is None:
            return
        show_problems(self.config, [problem], name=RESULTS_PROBLEMS)
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    # the summary ------------------------------------------------------------------------------

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """Tasks checked, docs rendered, outcomes, snapshots written, version bumps needed."""
        context = self.context
        tally = self.collected.tally
        broken = broken_outside_run(context)
        written = self._written_lines()
        if not tally.items and not broken and not context.nothing_changed and not written:
            return
        terminalreporter.section("evaltasks")
        if context.nothing_changed and context.changes is not None:
            terminalreporter.line(context.changes.describe(), green=True)
        for line, colour in tally.lines():
            terminalreporter.line(line, **({colour: True} if colour else {}))
        for line in broken:
            terminalreporter.line(line, yellow=True)
        if context.left_out:
            left = context.left_out
            named = ", ".join(left[:5]) + (" ..." if len(left) > 5 else "")
            terminalreporter.line(
                f"{count(len(left), 'task')} not checked, their data is not local "
                f"(--evaltasks-local-only): {named}",
                yellow=True,
            )
        if self.lookahead is not None and self.config.get_verbosity() > 0:
            terminalreporter.line(self.lookahead.line())
        if context.options.details and self.collected.kept:  # syrupy's --snapshot-details
            for line in self.collected.summary().detail_lines():
                terminalreporter.line(line)
        for line, colour in written:
            terminalreporter.line(line, **({colour: True} if colour else {}))
        report = context.options.report
        if report is not None and not self.worker and not self._failed(REPORT_PROBLEMS):
            terminalreporter.line(f"report written to {shown(report)}")

    def _written_lines(self) -> list[tuple[str, str | None]]:
        """Where the export and the results file went, or why the export did not (nothing on
        a worker; a failed results file is said in red at the end of the summary)."""
        if self.worker:
            return []
        lines: list[tuple[str, str | None]] = []
        exporter = self.exporter
        if exporter is not None and exporter.problem is not None:
            lines.append((f"evaltasks: error: {exporter.problem}", "red"))
        elif exporter is not None and exporter.written is not None:
            lines.append(
                (f"{count(exporter.written, 'prompt')} exported to {shown(exporter.path)}", None)
            )
        results = self.context.options.results
        if results is not None and not self._failed(RESULTS_PROBLEMS):
            lines.append((f"results written to {shown(results)}", None))
        return lines

    def _failed(self, problems: str) -> bool:
        """A write's problems were said (by the plugin `report.show_problems` registers)."""
        return self.config.pluginmanager.has_plugin(problems)


def header_lines(context: RunContext) -> list[str]:
    """The run's header: what is checked, from which task string, against which snapshots and
    data, what a changed-only or local-only run left out, and warnings about the task files."""
    options = context.options
    plan = context.plan
    mode = run_mode(options)
    extra = []
    if plan.broken:
        extra.append(count(len(plan.broken), "broken task module"))
    if plan.orphans:
        extra.append(count(len(plan.orphans), "orphan snapshot"))
    lines = [
        f"evaltasks: {count(len(plan.requests), 'task')} from "
        f"{repr(options.spec) if options.specs else 'the node ids given'}"
        + (f" and {', '.join(extra)}" if extra else "")
        + f" ({mode} mode)",
        f"evaltasks: snapshots in {shown(options.snapshot_dir)}, data in {shown(options.data_dir)}",
    ]
    if options.root_note is not None:
        lines.append(f"evaltasks: {options.root_note}")
    if context.changes is not None:
        lines.append(f"evaltasks: {context.changes.describe()}")
    if context.left_out:
        lines.append(
            f"evaltasks: {count(len(context.left_out), 'task')} left out, their data is not in "
            f"the local data root (--evaltasks-local-only): they are not checked"
        )
    registry = context.registry
    lines += [f"evaltasks: {note}" for note in registry.partial_notes()]
    shadowed = registry.shadowed
    lines += [f"evaltasks: warning: {warning}" for warning in shadowed[:5]]
    if len(shadowed) > 5:
        lines.append(f"evaltasks: ... and {len(shadowed) - 5} more (pytest --evaltasks-list)")
    return lines + [f"evaltasks: {line}" if not line.startswith(" ") else line
                    for line in broken_outside_run(context)]  # fmt: skip


def broken_outside_run(context: RunContext) -> list[str]:
    """Task modules that failed to import while none of this run's tasks is in them: named in
    the summary section, which `-q` shows (the header, which `-q` hides, names them too)."""
    broken = context.registry.broken
    if not broken or context.plan.broken:  # under `all` they are failing items instead
        return []
    lines = [
        f"{count(len(broken), 'task module')} failed to import (none of this run's tasks is in "
        f"them; pytest --evaltasks-list shows the errors):"
    ]
    lines += [f"  {shown(module.path)}: {module.exception}" for module in broken[:5]]
    if len(broken) > 5:
        lines.append(f"  ... and {len(broken) - 5} more")
    return lines


def selection_of(context: RunContext) -> Selection:
    """The selection facts of a run."""
    options = context.options
    plan = context.plan
    return Selection(
        mode=run_mode(options),
        spec=options.spec,
        tasks=len(plan.requests),
        broken=len(plan.broken),
        orphans=len(plan.orphans),
        changed=context.changes.describe() if context.changes is not None else None,
        base_ref=context.base.ref if context.base is not None else None,
    )


def run_mode(options: Options) -> str:
    """The run's mode as the header and the report name it."""
    if options.update:
        return "update"
    return "update new only" if options.update_new_only else "compare"
