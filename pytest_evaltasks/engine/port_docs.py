"""Each rendered doc as a port compares it (`ports.PortDoc`): one plain record per doc.

A lighteval-style task's docs are read here; another harness's units carry their own record,
made by their source (`RenderedUnit.port`), since only the source knows its harness's objects.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .doc import SamplingMethod, golds_or_none
from .ports import PortDoc
from .prompts import render_messages, render_plain
from .rendered import DocsRendered, RenderedTask, UnitsRendered

if TYPE_CHECKING:
    from .chat_template import ChatTemplate
    from .run_settings import RunSettings
    from .task import Task


def port_docs(
    rendered: RenderedTask,
    run: RunSettings,
    template: ChatTemplate | None = None,
    key: str | None = None,
) -> list[PortDoc]:
    """The docs of a rendered task, in evaluation order, as a port compares them; `key`: the
    column docs are aligned by (its value read from each doc's row)."""
    if isinstance(rendered, UnitsRendered):
        found = []
        for unit in rendered.units:
            if unit.port is None:
                raise ValueError(f"task {rendered.name!r}: its source gives no port record")
            found.append(unit.port if key is None else _keyed(unit.port, key))
        return found
    assert isinstance(rendered, DocsRendered)
    return _docs(rendered, run, template, key)


def _keyed(doc: PortDoc, key: str) -> PortDoc:
    """A unit's record with its key taken from the row columns its source kept."""
    value = doc.columns.get(key) if doc.columns else None
    return replace(doc, key=None if value is None else str(value))


def _docs(
    rendered: DocsRendered, run: RunSettings, template: ChatTemplate | None, key: str | None
) -> list[PortDoc]:
    task = rendered.task
    config = task.config
    eval_split = config.evaluation_splits[0]
    shot_splits = task.fewshot_splits or list(config.evaluation_splits)
    keys = _key_values(task, key) if key else {}
    docs = []
    for label, doc in rendered.docs:
        row = label if "/" in label else f"{eval_split}/{label}"
        golds = golds_or_none(doc) or []
        chat = None
        if template is not None:
            from .chat_template import apply_chat_template

            chat = apply_chat_template(template, render_messages(doc, run.system_prompt))
        docs.append(
            PortDoc(
                row=row,
                prompt=render_plain(doc, run.system_prompt),
                choices=tuple(str(choice) for choice in doc.choices or ()),
                target=golds[0] if golds else "",
                fewshot_rows=tuple(f"{shot_splits[0]}/{ex.id}" for ex in doc.fewshot_samples),
                stops=tuple(doc.stop_sequences or ()),
                max_tokens=doc.generation_size,
                chat=chat,
                key=keys.get(row),
                generates=SamplingMethod.GENERATIVE in (doc.sampling_methods or ()),
            )
        )
    return docs


def _key_values(task: Task, key: str) -> dict[str, str]:
    """Each evaluation row's value of the key column, by row (`test/12`)."""
    values: dict[str, str] = {}
    for split in task.config.evaluation_splits:
        for index, row in enumerate(task.source.rows(split)):
            if key in row and row[key] is not None:
                values[f"{split}/{index}"] = str(row[key])
    return values
