"""pytest nodes: one virtual collector under the session, one item per requested task."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..engine.task import FewShotFromEvalWarning
from ..engine.task_string import request_label
from ..errors import EvalTaskError
from ..snapshot.format import SnapshotFacts, build_snapshot, parse_snapshot
from ..snapshot.gate import Outcome, Verdict, judge
from ..snapshot.syrupy_extension import (
    assert_snapshot,
    diff_lines,
    read_snapshot_text,
    snapshot_filename,
)

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

    from ..engine.chat_template import ChatTemplate
    from ..engine.registry import Registry
    from ..engine.task_string import TaskRequest
    from .options import Options

COLLECTOR_NAME = "evaltasks"
RESULT_KEY = "evaltasks"


class EvalTasksWarning(pytest.PytestWarning):
    """Something a task author should look at that does not fail the run."""


class SnapshotMismatch(Exception):
    """A task's snapshot check failed: a headline, then the diff."""

    def __init__(self, headline: str, diff: list[str]) -> None:
        super().__init__(headline)
        self.headline = headline
        self.diff = diff

    def render(self) -> str:
        """The failure text pytest shows."""
        return "\n".join([self.headline, *self.diff])


@dataclass(frozen=True)
class RunContext:
    """Session-wide state the items share (kept in `config.stash`)."""

    options: Options
    registry: Registry
    pairs: list[tuple[str, TaskRequest]]
    template: ChatTemplate | None


class _ItemObject:
    """What syrupy's location reads from `item.obj`: a module and a name."""

    def __init__(self, name: str) -> None:
        self.__module__ = __name__
        self.__name__ = name


class EvalTasksCollector(pytest.Collector):
    """The one virtual collector that yields an item per requested task."""

    def __init__(self, *, context: RunContext, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.context = context

    def collect(self) -> list[pytest.Item]:
        """Items in the order the task string asked for them."""
        items: list[pytest.Item] = []
        for task_name, request in self.context.pairs:
            config = self.context.registry.configs[task_name]
            key = item_key(task_name, request)
            item = TaskItem.from_parent(
                self,
                name=key,
                task_name=task_name,
                request=request,
                source=_source(config.source_file, self.context.registry.origins[task_name]),
                line=config.source_line,
                snapshot_path=self.context.options.snapshot_dir / snapshot_filename(key),
            )
            item.add_marker("evaltask")
            items.append(item)
        return items


def item_key(task_name: str, request: TaskRequest) -> str:
    """`name@k=v|n`: the task string that reproduces this item, and its identity."""
    return request_label(task_name, request.num_fewshots, request.metric_params)


def _source(recorded: str, module_file: Path) -> Path:
    """Where the config was created, or its module when that is unknown."""
    path = Path(recorded)
    return path if path.is_file() else module_file


class TaskItem(pytest.Item):
    """Build a task's docs, render every prompt, and check the snapshot and version gate."""

    def __init__(
        self,
        *,
        task_name: str,
        request: TaskRequest,
        source: Path,
        line: int,
        snapshot_path: Path,
        **kwargs: Any,
    ) -> None:
        super().__init__(path=source, **kwargs)
        self.task_name = task_name
        self.request = request
        self.source_line = line
        self.snapshot_path = snapshot_path
        self.obj = _ItemObject(self.name)

    def runtest(self) -> None:
        """Render, judge against the recorded snapshot, then compare or write via syrupy."""
        context: RunContext = self.config.stash[CONTEXT_KEY]
        options = context.options
        # A plain dict: reports carry user_properties to the xdist controller.
        result: dict[str, Any] = {"task": self.name, "docs": 0, "outcome": "", "written": False}
        self.user_properties.append((RESULT_KEY, result))
        task = context.registry.make_task(self.task_name, self.request)
        with warnings.catch_warnings():
            # The snapshot header carries this warning, and the item repeats it once below.
            warnings.simplefilter("ignore", FewShotFromEvalWarning)
            built = build_snapshot(task, options.run, context.template)
        result["docs"] = built.facts.num_docs
        old_text, old_facts = self._recorded(options.update)
        verdict = judge(
            old_facts, built.facts, self.name, options.update, options.allow_unversioned
        )
        result["outcome"] = verdict.outcome.value
        result["needs_bump"] = verdict.needs_version_bump
        pool_warnings = built.warnings if task.num_fewshots else []  # unused at 0 shots
        for message in [*pool_warnings, *verdict.warnings]:
            warnings.warn(EvalTasksWarning(f"{self.name}: {message}"), stacklevel=1)
        if verdict.outcome is Outcome.REFUSED:
            raise SnapshotMismatch(verdict.headline, diff_lines(old_text or "", built.text))
        ok, diff = assert_snapshot(self, built.text, options.update)
        if not ok:
            if verdict.outcome is Outcome.SAME:  # same hashes, but the text itself differs
                result["outcome"] = Outcome.CHANGED.value
            raise SnapshotMismatch(_headline(verdict, self.snapshot_path), diff)
        result["written"] = options.update and verdict.outcome in (Outcome.NEW, Outcome.CHANGED)

    def _recorded(self, update: bool) -> tuple[str | None, SnapshotFacts | None]:
        """The recorded snapshot text and facts; a corrupted file fails unless updating."""
        text = read_snapshot_text(self.snapshot_path)
        problem = None
        if isinstance(text, UnicodeDecodeError):
            problem = f"is not valid UTF-8 ({text.reason} at byte {text.start})"
        elif text is not None:
            try:
                return text, parse_snapshot(text)
            except ValueError as exc:
                problem = f"cannot be read: {exc}"
        if problem is None:
            return None, None
        message = f"snapshot file {self.snapshot_path} {problem}"
        if not update:
            raise SnapshotMismatch(
                message + "; restore it from version control or rewrite it with --snapshot-update",
                [],
            )
        warnings.warn(EvalTasksWarning(message + "; rewriting it"), stacklevel=1)
        return None, None

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | TerminalRepr:
        """A short headline and the diff, not a traceback through pytest."""
        if isinstance(excinfo.value, SnapshotMismatch):
            return excinfo.value.render()
        if isinstance(excinfo.value, EvalTaskError):
            return _engine_error(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        """Point at the line of the task file that created the config."""
        return self.path, max(self.source_line - 1, 0), f"evaltask {self.name}"


def _headline(verdict: Verdict, snapshot_path: Path) -> str:
    """The first line of a failed comparison."""
    if verdict.outcome is Outcome.NEW:
        return (
            f"{verdict.headline} ({snapshot_path}); review the prompts below and record "
            f"them with --snapshot-update"
        )
    return verdict.headline or f"snapshot {snapshot_path} does not match"


def _engine_error(error: EvalTaskError) -> str:
    """An engine error with the cause chain it carries (e.g. the prompt function's traceback)."""
    import traceback

    lines = [f"{type(error).__name__}: {error}"]
    cause = error.__cause__
    if cause is not None:
        lines.append("")
        lines.append("caused by:")
        lines.extend(
            line.rstrip("\n")
            for line in traceback.format_exception(type(cause), cause, cause.__traceback__)
        )
    return "\n".join(lines)


def result_of(report: pytest.TestReport) -> dict[str, Any] | None:
    """The figures an item attached to its report (it may come from an xdist worker)."""
    for key, value in report.user_properties:
        if key == RESULT_KEY and isinstance(value, dict):
            return value
    return None


CONTEXT_KEY = pytest.StashKey[RunContext]()
