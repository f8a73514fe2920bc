"""`--evaltasks-show[=N|ID,ID]`: print a task's prompts exactly as sent, and touch nothing.

No snapshot is read or written: this is how a task author looks at a prompt while writing it.
Each doc is shown as a snapshot shows it (the `| `-quoted prompt, with the system prompt and
the chat rendering of the run), with its few-shot ids, choices and golds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..snapshot.layout import doc_block

if TYPE_CHECKING:
    from ..engine.chat_template import ChatTemplate
    from ..engine.registry import Registry
    from ..engine.task_string import TaskRequest
    from ..snapshot.settings import RunSettings

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

    shown = Shown([])
    lines = shown.lines
    for request in requests:
        if registry.renders_units(request.name):
            _show_units(registry, request, selection, settings, template, shown)
            continue
        try:
            task = registry.make_task(request)
            result = task.build(settings.max_samples)
        except EvalTaskError as exc:
            lines.append(f"=== {request.label}: {type(exc).__name__}: {exc}")
            lines.append("")
            shown.problems += 1
            continue
        total = len(result.docs)
        chosen = [
            (position, label, doc)
            for position, (label, doc) in enumerate(result.docs)
            if (position < selection.count if not selection.ids else label in selection.ids)
        ]
        lines.append(f"=== {request.label}: {len(chosen)} of {total} docs (version {task.version})")
        missing = [ident for ident in selection.ids if ident not in {c[1] for c in chosen}]
        if missing:
            shown.problems += 1
            lines.append(f"no doc with id {', '.join(missing)} (ids run from 0; labels are split/id"
                         f" when a task has several evaluation splits)")  # fmt: skip
        for position, label, doc in chosen:
            lines.append(doc_block(position, total, label, doc, settings, template))
            lines.append("")
    return shown


def _show_units(
    registry: Registry,
    request: TaskRequest,
    selection: Selection,
    settings: RunSettings,
    template: ChatTemplate | None,
    shown: Shown,
) -> None:
    """A task whose source renders units (lm-eval's): each doc's requests, as its snapshot
    shows them."""
    from ..errors import EvalTaskError
    from ..snapshot.units import unit_block

    lines = shown.lines
    try:
        rendered = registry.render(request, settings, template)
    except EvalTaskError as exc:
        lines.append(f"=== {request.label}: {type(exc).__name__}: {exc}")
        lines.append("")
        shown.problems += 1
        return
    units = rendered.units
    chosen = [
        (position, unit)
        for position, unit in enumerate(units)
        if (position < selection.count if not selection.ids else unit.label in selection.ids)
    ]
    lines.append(
        f"=== {request.label}: {len(chosen)} of {len(units)} docs (version "
        f"{rendered.version})"
    )
    missing = [ident for ident in selection.ids if ident not in {u.label for _, u in chosen}]
    if missing:
        shown.problems += 1
        lines.append(f"no doc with id {', '.join(missing)} (ids are lm-eval's doc ids, from 0)")
    for position, unit in chosen:
        lines.append(unit_block(position, len(units), unit))
        lines.append("")
