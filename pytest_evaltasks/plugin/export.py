"""`--evaltasks-export=FILE`: every prompt the run rendered, as JSON Lines, one object per doc.

Each task item turns the docs of the build it checked into lines (`export_lines`) and keeps them
in its stash; the `Exporter` (a plugin registered only when the option is given, so other runs
pay nothing) moves them onto the item's call report as the `evaltasks_export` attribute. xdist
carries report attributes to the controller like the rest of the report, and JUnit XML never
sees them. The controller keeps each item's lines as its report arrives and writes the file
once, atomically, when the session ends, in the plan's order: the same bytes serially and
under `-n`, whichever worker ran which item.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..files import write_atomic

if TYPE_CHECKING:
    from ..engine.task_string import TaskRequest
    from ..snapshot.built import BuiltSnapshot

EXPORT_PLUGIN = "evaltasks-export"
REPORT_ATTRIBUTE = "evaltasks_export"
"""The call report's attribute holding an item's `[plan position, rendering position, lines]`."""
LINES_KEY: pytest.StashKey[str] = pytest.StashKey()
"""An item's export lines, from its check until its call report is made."""


def export_lines(item: str, rendering: str, request: TaskRequest, built: BuiltSnapshot) -> str:
    """One JSON object per doc of a build, each on its own line (docs/ci.md: Export the
    prompts): the item's keys, then the doc's record as its kind has it (`built.Form.export`)."""
    rendered = built.rendered
    head = {
        "task": request.label,
        "task_name": request.name,
        "num_fewshots": request.num_fewshots if rendered.shots is None else rendered.shots,
        "version": rendered.version,
        "item": item,
        "rendering": rendering,
    }
    form = built.form
    return "".join(_json_line({**head, **form.export(p)}) for p in range(built.size))


def _json_line(record: dict[str, Any]) -> str:
    """A record as one line: UTF-8 text as itself, unless it holds a lone surrogate (which UTF-8
    cannot hold), then that line all `\\u` escapes; values JSON has no type for (a numpy
    scalar) as their Python value, else as text."""
    line = json.dumps(record, ensure_ascii=False, default=_plain)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(record, ensure_ascii=True, default=_plain)
    return line + "\n"


def _plain(value: object) -> object:
    """What `json` cannot encode: a numpy scalar's value, a set as a sorted list, else text."""
    item = getattr(value, "item", None)
    if callable(item) and hasattr(value, "dtype"):
        return item()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return str(value)


@dataclass(eq=False)  # a plugin: pluggy keeps plugins in sets
class Exporter:
    """The run's export: items' lines onto their reports (workers), reports' lines into the
    file (the controller, or the only process)."""

    path: Path
    order: dict[tuple[str, int, str], int]
    """Each planned request's position, by its key."""
    renderings: list[str]
    """The run's rendering keys, in order."""
    collect: bool = True
    """False on an xdist worker, which only hands its items' lines on."""
    parts: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    """Each reported item's (plan position, rendering position, lines), by node id."""
    written: int | None = None
    """Docs written, once the file is; None before, or when the write failed."""
    problem: str | None = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        """Move the item's lines from its stash onto its call report."""
        report = yield
        if call.when == "call" and LINES_KEY in item.stash:
            lines = item.stash[LINES_KEY]
            del item.stash[LINES_KEY]
            request = getattr(item, "request", None)
            rendering = getattr(item, "rendering", "")
            position = self.order.get(request.key, len(self.order)) if request else len(self.order)
            ranked = self.renderings.index(rendering) if rendering in self.renderings else -1
            setattr(report, REPORT_ATTRIBUTE, [position, ranked, lines])
        return report

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep an item's lines as its report arrives (from an xdist worker too), and take
        them off the report: last, once xdist has sent it on and the terminal has kept it, so
        the session holds one copy of the prompts."""
        value = report.__dict__.pop(REPORT_ATTRIBUTE, None)
        if not self.collect:
            return
        if report.when == "call" and isinstance(value, (list, tuple)) and len(value) == 3:
            position, ranked, lines = value
            self.parts[report.nodeid] = (int(position), int(ranked), str(lines))

    def write(self) -> None:
        """Write every item's lines in plan order; a failure is kept in `problem`."""
        ordered = sorted(self.parts.items(), key=lambda part: (part[1][0], part[1][1], part[0]))
        text = "".join(lines for _, (_, _, lines) in ordered)
        try:
            write_atomic(self.path, text.encode("utf-8"))
        except OSError as exc:
            self.problem = f"the prompts were not exported: {exc}"
            return
        self.written = text.count("\n")
