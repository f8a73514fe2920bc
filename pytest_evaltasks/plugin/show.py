"""`--evaltasks-show[=N|ID,ID]`: print a task's prompts exactly as sent, and touch nothing.

No snapshot is read or written: this is how a task author looks at a prompt while writing it.
Each doc is shown as a snapshot shows it (the `| `-quoted prompt, with the system prompt and
the chat rendering of the run), with its few-shot ids, choices and golds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine.chat_template import ChatTemplate
    from ..engine.registry import Registry
    from ..engine.run_settings import RunSettings
    from ..engine.task_string import TaskRequest

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
