"""Port items: `evaltasks::port:NAME` builds both sides of a declared port and gates on what
differs between them (`engine/ports`, `snapshot/port_compare`, `snapshot/port_record`).

Each side is built by its own source from the run's data root, under the run's first rendering
(its system prompt and chat template), exactly as its task item builds it. The record lives in
the snapshot folder's `ports/` subfolder, one file per port. A side whose harness is not
installed skips the item, naming the extra to install.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..engine.ports import Port, PortDoc, PortSide
from ..errors import EvalTaskError
from ..files import holds, write_atomic
from ..snapshot.failure import FailureReport
from ..snapshot.gate import Outcome
from ..snapshot.port_record import PortOutcome, judge_port
from .items import RUN_KEY, CheckFailed, CheckItem
from .root import relative_name

if TYPE_CHECKING:
    from ..engine.registry import Registry
    from ..engine.rendered import RenderedTask
    from .context import RunContext
    from .options import Options

PORTS_FOLDER = "ports"
"""The snapshot folder's subfolder that holds port records."""

EXTRAS = {
    "lighteval": "lighteval",
    "lm_eval": "lm-eval",
    "inspect_evals": "inspect",
}
"""The package a shortcut folder needs, and the extra that installs it."""

_OUTCOMES = {
    PortOutcome.NEW: Outcome.NEW,
    PortOutcome.UNCHANGED: Outcome.UNCHANGED,
    PortOutcome.CHANGED: Outcome.PORT,
    PortOutcome.UNREADABLE: Outcome.UNREADABLE,
}


def record_path(snapshot_dir: Path, port: Port) -> Path:
    """Where a port's record lives."""
    return snapshot_dir / PORTS_FOLDER / f"{port.name}.txt"


class PortItem(CheckItem):
    """Build both sides of a port, compare them doc by doc, and gate on the differences."""

    def __init__(self, *, port: Port, declared_in: Path, **kwargs: Any) -> None:
        super().__init__(path=declared_in, **kwargs)
        self.port = port

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"evaltask {self.name}"

    def runtest(self) -> None:
        """Build, compare, judge against the record; pass, write, or fail with the diff of the
        differences."""
        context = self.config.stash[RUN_KEY].context
        for side in (self.port.a, self.port.b):
            skip_unless_installed(self.port, side)
        result = self._start("port")
        path = record_path(context.options.snapshot_dir, self.port)
        result.snapshot = relative_name(path, context.root)
        try:
            text = port_check(context, self.port)
            old = path.read_text(encoding="utf-8") if path.is_file() else None
            update = context.options.update
            verdict = judge_port(self.port.name, old, text, update)
            result.outcome = _OUTCOMES[verdict.outcome]
            result.headline = verdict.headline
            result.details = list(verdict.body) if not verdict.passes else []
            if verdict.write:
                _write(path, text)
                result.written = True
        finally:
            self._finish(result)
        if not verdict.passes:
            raise CheckFailed(FailureReport(verdict.headline, list(verdict.body)))


def port_check(context: RunContext, port: Port) -> str:
    """Build both sides, compare them and lay out the record."""
    from ..snapshot.port_compare import compare
    from ..snapshot.port_record import port_text

    a_docs, a_settings = side_docs(context, port, port.a)
    b_docs, b_settings = side_docs(context, port, port.b)
    comparison = compare(a_docs, b_docs, by_key=port.key is not None)
    return port_text(port, comparison, {"a": a_settings, "b": b_settings})


def side_docs(context: RunContext, port: Port, side: PortSide) -> tuple[list[PortDoc], str]:
    """One side built and read as port docs, with its source's settings as recorded."""
    from ..engine.port_docs import port_docs

    rendered, rendering = render_side(context, port, side)
    docs = port_docs(rendered, rendering.run, rendering.template, port.key)
    return docs, side_settings(rendered, rendering, context.root)


def side_settings(rendered: RenderedTask, rendering: Any, root: Path) -> str:
    """What built a side, as its record names it: the kind of task, and the harness's version
    where another harness built it (an upgrade of it is named when the differences change)."""
    from ..engine.rendered import UnitsRendered
    from ..snapshot.built import form_of

    kind = rendered.kind if isinstance(rendered, UnitsRendered) else "lighteval-style task"
    form = form_of(rendered, rendering.run, rendering.template, root)
    settings = [f"{key} {value}" for key, value in form.settings().items()]
    return "; ".join([kind, *settings])


def render_side(context: RunContext, port: Port, side: PortSide) -> tuple[RenderedTask, Any]:
    """One side rendered by its own source under the run's first rendering."""
    registry = side_registry(side, context.registry, context.options, context.port_registries)
    return render_with(registry, port, side, context.renderings[0])


def render_with(
    registry: Registry, port: Port, side: PortSide, rendering: Any
) -> tuple[RenderedTask, Any]:
    """One side rendered by a registry that defines it."""
    try:
        requests = registry.resolve(side.task)
    except EvalTaskError as exc:
        raise EvalTaskError(f"port {port.name!r}, side {side.describe()}: {exc}") from None
    if len(requests) != 1:
        raise EvalTaskError(
            f"port {port.name!r}: side {side.describe()} names {len(requests)} tasks; a side "
            f"names one task (a group's member, not the group)"
        )
    return registry.render(requests[0], rendering.run, rendering.template), rendering


def side_registry(
    side: PortSide, own: Registry, options: Options, made: dict[Path, Registry]
) -> Registry:
    """The registry that defines a side: the run's own, or one over the side's folder (made
    once per folder in `made`), reading the run's data root."""
    if side.folder is None:
        return own
    from ..engine.registry import Registry
    from .options import task_folder

    folder = task_folder(options.root, side.folder)
    if folder not in made:
        made[folder] = Registry([folder], data_dir=options.data_dir, root=options.root)
    return made[folder]


def skip_unless_installed(port: Port, side: PortSide) -> None:
    """Skip a port one of whose sides is an installed harness's folder that is not installed
    here, naming the extra that installs it."""
    from .options import SHORTCUTS

    if side.folder not in SHORTCUTS:
        return
    package = side.folder.split(":")[0]
    if importlib.util.find_spec(package) is None:
        pytest.skip(
            f"port {port.name}: side {side.describe()} needs {package}: install "
            f"pytest-evaltasks[{EXTRAS[package]}] to check it"
        )


def _write(path: Path, text: str) -> None:
    """Write a record atomically and check it landed."""
    data = text.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)
    if not holds(path, data):
        raise CheckFailed(
            FailureReport(f"the port record could not be written to {path}; rerun", [])
        )
