"""A rendered task, fingerprinted: the facts a snapshot records, its text laid out on demand.

`build_snapshot` takes what any source rendered (`engine.rendered.RenderedTask`) and gives one
`BuiltSnapshot`, whatever the source: the check, the gate, the export, `--evaltasks-show` and
the fresh-process builds read it alike. How a kind of rendered doc is hashed, headed and shown
is its *form*, chosen here and nowhere else, so every snapshot keeps the bytes it has always
had:

- `DocsForm`: our `Doc`s (lighteval-style tasks): the `[task]` fields of `facts.task_fields`,
  the per-doc hashes of `fingerprint`, the blocks of `layout`, and format 2's facts to verify
  an older file;
- `UnitsForm`: another harness's rendered units: their header values as written by
  `units.header_value`, the unit hashes and blocks of `units`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..engine.line_text import escape_line
from ..engine.rendered import DocsRendered, RenderedTask, UnitsRendered, Upstream
from . import outline
from .facts import (
    FORMAT_VERSION,
    SnapshotFacts,
    fingerprinted,
    label_key,
    recorded_facts,
    task_fields,
)

if TYPE_CHECKING:
    from ..engine.chat_template import ChatTemplate
    from ..engine.run_settings import RunSettings


class Form(Protocol):
    """How one kind of rendered doc is recorded and shown."""

    @property
    def task_label(self) -> str:
        """The task string an unrecordable value's error names."""
        ...

    def labelled(self) -> Sequence[tuple[str, Any]]:
        """Each doc with its label, in evaluation order."""
        ...

    def digest(self, unit: Any) -> str:
        """One doc's hash."""
        ...

    def header(self, label: str | None) -> dict[str, str]:
        """The `[task]` section, as written; `label` names the item."""
        ...

    def settings(self) -> dict[str, str]:
        """What the source records in `[settings]` after the run's own settings."""
        ...

    def block(self, position: int) -> str:
        """One doc in full, as a snapshot (and `--evaltasks-show`) shows it."""
        ...

    def legacy(self) -> SnapshotFacts | None:
        """The facts as format 2 recorded them; None when the kind was never recorded so."""
        ...

    def export(self, position: int) -> dict[str, Any]:
        """One doc's `--evaltasks-export` record after the item's own keys."""
        ...


class DocsForm:
    """Our `Doc`s, as lighteval-style tasks record them."""

    def __init__(
        self,
        rendered: DocsRendered,
        settings: RunSettings,
        template: ChatTemplate | None,
        root: Path | None,
    ) -> None:
        from .fingerprint import DocHasher

        self.rendered = rendered
        self.run = settings
        self.template = template
        self.root = root
        self.digest = DocHasher().digest

    @property
    def task_label(self) -> str:
        return self.rendered.request.label

    def labelled(self) -> Sequence[tuple[str, Any]]:
        return self.rendered.docs

    def header(self, label: str | None) -> dict[str, str]:
        return task_fields(self.rendered.task, self.rendered.result, self.root, label)

    def settings(self) -> dict[str, str]:
        return {}

    def block(self, position: int) -> str:
        from .layout import doc_block

        docs = self.rendered.docs
        label, doc = docs[position]
        return doc_block(position, len(docs), label, doc, self.run, self.template)

    def legacy(self) -> SnapshotFacts:
        from . import format_v2

        docs = self.rendered.docs
        hashes = {escape_line(k): v for k, v in format_v2.hash_lines(docs).items()}
        return SnapshotFacts(
            format_version=format_v2.FORMAT,
            task=format_v2.task_header(self.rendered.task, self.rendered.result),
            settings=format_v2.settings(self.run),
            layout={},
            hashes=dict(sorted(hashes.items(), key=lambda item: label_key(item[0]))),
        )

    def export(self, position: int) -> dict[str, Any]:
        from ..engine.doc import golds_or_none
        from ..engine.prompts import render_messages, render_plain

        label, doc = self.rendered.docs[position]
        run = self.run
        messages = render_messages(doc, run.system_prompt)
        return {
            "doc_id": doc.id,
            "doc_label": label,
            "position": position,
            "query": doc.query,
            "choices": doc.choices,
            "gold_index": doc.gold_index,
            "golds": golds_or_none(doc),
            "instruction": doc.instruction,
            "fewshot_ids": [example.id for example in doc.fewshot_samples],
            "prompt": render_plain(doc, run.system_prompt),
            "messages": messages,
            "chat_template": run.chat_template,
            "chat_template_text": self._chat_text(messages),
            "sampling": {
                "methods": [str(getattr(m, "value", m)) for m in doc.sampling_methods],
                "generation_size": doc.generation_size,
                "stop_sequences": doc.stop_sequences,
                "num_samples": doc.num_samples,
                "use_logits": doc.use_logits,
            },
        }

    def _chat_text(self, messages: list[Any]) -> str | None:
        """The messages through the run's chat template, when one is in use."""
        if self.template is None:
            return None
        from ..engine.chat_template import apply_chat_template

        return apply_chat_template(self.template, messages)


class UnitsForm:
    """Another harness's rendered units."""

    def __init__(self, rendered: UnitsRendered, settings: RunSettings, root: Path | None) -> None:
        from .units import unit_digest

        self.rendered = rendered
        self.run = settings
        self.root = root
        self.digest = unit_digest
        self._labelled = [(unit.label, unit) for unit in rendered.units]

    @property
    def task_label(self) -> str:
        return self.rendered.name

    def labelled(self) -> Sequence[tuple[str, Any]]:
        return self._labelled

    def header(self, label: str | None) -> dict[str, str]:
        from .units import units_header

        return units_header(self.rendered, label or self.rendered.name, self.root)

    def settings(self) -> dict[str, str]:
        return self.rendered.settings

    def block(self, position: int) -> str:
        from .units import unit_block

        return unit_block(position, self.rendered.size, self.rendered.units[position])

    def legacy(self) -> None:
        return None  # rendered units were first recorded in format 3

    def export(self, position: int) -> dict[str, Any]:
        unit = self.rendered.units[position]
        return {
            "source": self.rendered.kind,
            "doc_label": unit.label,
            **unit.export,
            "system_prompt": self.run.system_prompt,
            "chat_template": self.run.chat_template,
        }


def form_of(
    rendered: RenderedTask,
    settings: RunSettings,
    template: ChatTemplate | None,
    root: Path | None,
) -> Form:
    """The form a rendered task's docs are recorded in: the one place the kinds part."""
    if isinstance(rendered, DocsRendered):
        return DocsForm(rendered, settings, template, root)
    assert isinstance(rendered, UnitsRendered), type(rendered)
    return UnitsForm(rendered, settings, root)


class Reads(NamedTuple):
    """What a build read, as records name project files (relative to the root)."""

    recorded: tuple[str, ...] = ()
    """What its snapshot records in `[inputs]` and changed-only runs select it by: everything
    it read, and everything the code it reached was seen to read in this process (a read that
    an earlier build cached counts)."""
    own: tuple[str, ...] = ()
    """What this build itself was seen to read (a subset): what a record must hold, whatever
    was built before it in the process."""


NO_READS = Reads()


class BuiltSnapshot:
    """One rendered task, fingerprinted; its text is laid out on demand (a `check.Built`)."""

    def __init__(
        self,
        rendered: RenderedTask,
        settings: RunSettings,
        template: ChatTemplate | None,
        root: Path | None,
        hash_seed: int | None = None,
        inputs: Reads | Callable[[], Reads] = NO_READS,
        label: str | None = None,
    ) -> None:
        """`inputs` may be asked for once the docs are fingerprinted: fingerprinting reads
        the images docs name."""
        self.rendered = rendered
        self.settings = settings
        self.template = template
        self.form = form_of(rendered, settings, template, root)
        form = self.form
        outlines: dict[str, tuple[str, ...]] = {}

        def header_of() -> dict[str, str]:
            with outline.collecting() as found:
                made = form.header(label)
            outlines.update(found)
            return made

        hashes, header = fingerprinted(form.task_label, form.labelled(), form.digest, header_of)
        recorded = {**settings.recorded(), **form.settings()}
        reads = inputs() if callable(inputs) else inputs
        self.reads = tuple(escape_line(path) for path in sorted(reads.own))
        """What this build itself read, as `[inputs]` lines (see `Reads.own`)."""
        self.facts = recorded_facts(
            header,
            recorded,
            hashes,
            hash_seed,
            reads.recorded,
            identities=outline.section(outlines),
        )
        self._made = (label, hash_seed, reads.recorded)
        self._older: dict[int, SnapshotFacts] = {}

    @property
    def size(self) -> int:
        """Docs rendered."""
        return self.rendered.size

    @property
    def partial(self) -> bool:
        """Fewer docs rendered than the task has (`--evaltasks-max-samples`)."""
        return self.size < self.rendered.total

    @property
    def upstream(self) -> Upstream | None:
        """The harness whose own release defines the task's config, if another's."""
        return self.rendered.upstream

    def facts_in(self, format_version: int) -> SnapshotFacts:
        """These facts as an older format records them (to verify a file in that format)."""
        if format_version == FORMAT_VERSION:
            return self.facts
        older = self._older.get(format_version)
        if older is None:  # made once: format 2's hashes every doc again
            if format_version == 3:
                older = self._format_3()
            elif format_version == 2:
                older = self.form.legacy() or self.facts
            else:
                older = replace(self.facts, format_version=format_version, identities=())
            self._older[format_version] = older
        return older

    def _format_3(self) -> SnapshotFacts:
        """Format 3's facts: the same docs, with identities as format 3 made them."""
        from .identity import format_3_identities

        label, hash_seed, inputs = self._made
        with format_3_identities():
            header = self.form.header(label)
            settings = {**self.settings.recorded(), **self.form.settings()}
        return recorded_facts(header, settings, self.facts.hash_text, hash_seed, inputs, 3)

    def label(self, position: int) -> str:
        """The doc's label as recorded."""
        return escape_line(self.form.labelled()[position][0])

    def block(self, position: int) -> str:
        """One doc in full."""
        return self.form.block(position)

    def text(self, docs_shown: int) -> str:
        """The whole file, with the first `docs_shown` docs in full."""
        from .layout import layout

        return layout(self.facts, docs_shown, self._blocks(docs_shown))

    def shown_text(self, docs_shown: int) -> str:
        """The part of the file after the doc hashes: the docs shown in full."""
        return "".join(f"\n{block}\n" for block in self._blocks(docs_shown))

    def _blocks(self, docs_shown: int) -> list[str]:
        return [self.block(position) for position in range(min(docs_shown, self.size))]

    def shown_blocks(self, docs_shown: int) -> dict[str, str]:
        """The docs shown in full, by label as recorded."""
        shown = range(min(docs_shown, self.size))
        return {self.label(position): self.block(position) for position in shown}

    def position_of(self, label: str) -> int | None:
        """A doc's position in evaluation order, by its label as recorded."""
        return next((p for p in range(self.size) if self.label(p) == label), None)

    def block_of(self, label: str) -> str | None:
        """One doc in full by label; None when this run did not render it."""
        position = self.position_of(label)
        return self.block(position) if position is not None else None


def build_snapshot(
    rendered: RenderedTask,
    settings: RunSettings,
    template: ChatTemplate | None = None,
    root: Path | None = None,
    hash_seed: int | None = None,
    inputs: Reads | Callable[[], Reads] = NO_READS,
    label: str | None = None,
) -> BuiltSnapshot:
    """Fingerprint every doc of a rendered task; `inputs` are the project files it read
    (`Reads`, or a function giving them once the docs are fingerprinted); `label` names the
    item (default: the task string)."""
    return BuiltSnapshot(rendered, settings, template, root, hash_seed, inputs, label)
