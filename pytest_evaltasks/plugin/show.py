"""`--evaltasks-show[=N|ID,ID]`: print a task's prompts exactly as sent, and touch nothing.

No snapshot is read or written: this is how a task author looks at a prompt while writing it.
Each doc is shown as a snapshot shows it (the `| `-quoted prompt, with the system prompt and
the chat rendering of the run), with its few-shot ids, choices and golds. A port's docs are
shown as its two sides render them, side by side (`show_ports`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine.chat_template import ChatTemplate
    from ..engine.ports import Port
    from ..engine.registry import Registry
    from ..engine.run_settings import RunSettings
    from ..engine.task_string import TaskRequest
    from .options import Options
    from .profiles import Rendering

DEFAULT_SHOWN = 3


@dataclass(frozen=True)
class Selection:
    """Which docs to show: the first `count`, or those with the given ids."""

    count: int = DEFAULT_SHOWN
    ids: tuple[str, ...] = ()

    @classmethod
    def parse(cls, value: str) -> Selection:
        """`5` (the first five docs) or `12,7` (docs by id, or `split/id` label)."""
        text = value.strip()
        if text.isdigit():
            return cls(count=int(text))
        return cls(count=0, ids=tuple(part.strip() for part in text.split(",") if part.strip()))


@dataclass
class Shown:
    """What `--evaltasks-show` prints, and whether anything asked for was missing or failed."""

    lines: list[str]
    problems: int = 0


def show(
    registry: Registry,
    requests: list[TaskRequest],
    selection: Selection,
    settings: RunSettings,
    template: ChatTemplate | None,
) -> Shown:
    """The text to print for every requested task; a task that fails (its prompt function
    raises) is reported and the others are still shown; missing ids count as problems."""
    from ..errors import EvalTaskError
    from ..snapshot.built import form_of

    shown = Shown([])
    lines = shown.lines
    for request in requests:
        try:
            rendered = registry.render(request, settings, template)
        except EvalTaskError as exc:
            lines.append(f"=== {request.label}: {type(exc).__name__}: {exc}")
            lines.append("")
            shown.problems += 1
            continue
        form = form_of(rendered, settings, template, None)
        labels = rendered.labels()
        chosen = [
            (position, label)
            for position, label in enumerate(labels)
            if (position < selection.count if not selection.ids else label in selection.ids)
        ]
        lines.append(
            f"=== {request.label}: {len(chosen)} of {len(labels)} docs (version {rendered.version})"
        )
        missing = [ident for ident in selection.ids if ident not in {c[1] for c in chosen}]
        if missing:
            shown.problems += 1
            lines.append(f"no doc with id {', '.join(missing)} ({rendered.ids})")
        for position, _ in chosen:
            lines.append(form.block(position))
            lines.append("")
    return shown


COLUMN = 60
"""Characters of a side's column in `--evaltasks-show` of a port."""


def show_ports(
    registry: Registry,
    options: Options,
    ports: list[Port],
    selection: Selection,
    rendering: Rendering,
) -> Shown:
    """`--evaltasks-show` of ports: each chosen doc (by row, `test/3`, or the first aligned
    ones) as both sides render it, side by side: a line that differs is marked `≠` between
    the columns, and every invisible character is written as its code point."""
    from ..engine.port_docs import port_docs
    from ..errors import EvalTaskError
    from ..snapshot.port_compare import pairs as port_pairs
    from .port_items import render_with, side_registry

    shown = Shown([])
    made: dict[Path, Registry] = {}
    for port in ports:
        sides = []
        try:
            for side in (port.a, port.b):
                own = side_registry(side, registry, options, made)
                rendered, used = render_with(own, port, side, rendering)
                sides.append(port_docs(rendered, used.run, used.template, port.key))
        except EvalTaskError as exc:
            shown.lines += [f"=== {port.item_name}: {type(exc).__name__}: {exc}", ""]
            shown.problems += 1
            continue
        pairs = port_pairs(sides[0], sides[1], port.key is not None)
        chosen = (
            [pair for pair in pairs if pair[0] in selection.ids]
            if selection.ids
            else pairs[: selection.count]
        )
        shown.lines.append(
            f"=== {port.item_name}: {len(chosen)} of {len(pairs)} aligned docs; "
            f"a = {port.a.describe()}, b = {port.b.describe()}"
        )
        missing = [ident for ident in selection.ids if ident not in {p[0] for p in chosen}]
        if missing:
            shown.problems += 1
            shown.lines.append(
                f"no doc with id {', '.join(missing)} (ids as the record names them)"
            )
        for ident, one, other in chosen:
            shown.lines += [f"--- {ident} ---", *columns(one.prompt, other.prompt), ""]
    return shown


def columns(a: str, b: str, width: int = COLUMN) -> list[str]:
    """Two texts side by side, line by line (long lines wrapped), `≠` where they differ."""
    from itertools import zip_longest

    from ..snapshot.visible import visible

    rows = [f"{'a':<{width}}   b"]
    for one, other in zip_longest(a.split("\n"), b.split("\n")):
        mark = "|" if one == other else "\u2260"
        left = _wrapped(visible(one) if one is not None else "", width)
        right = _wrapped(visible(other) if other is not None else "", width)
        for part, (l_part, r_part) in enumerate(zip_longest(left, right, fillvalue="")):
            rows.append(f"{l_part:<{width}} {mark if part == 0 else ' '} {r_part}".rstrip())
    return rows


def _wrapped(text: str, width: int) -> list[str]:
    """A line cut into pieces of `width` (at least one, empty for an empty line)."""
    return [text[i : i + width] for i in range(0, len(text), width)] or [""]
