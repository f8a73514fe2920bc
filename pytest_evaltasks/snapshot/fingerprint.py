"""Per-doc content hashes: everything a model is sent or scored against, and nothing else.

A doc's hash covers its rendered plain prompt, every `Doc` field a model or a metric reads
(canonically encoded, see `canonical`), and the ids and content of its few-shot examples. It
does not depend on run settings (system prompt, chat template): those are recorded beside the
hashes, so a changed setting is named as a setting and can never hide a content change.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ..engine.prompts import plain_prompt_head, plain_prompt_query
from .canonical import canonical, image_digest, typed_keys

if TYPE_CHECKING:
    from ..engine.doc import Doc

CONTENT_FIELDS = (
    "query",
    "choices",
    "gold_index",
    "instruction",
    "specific",
    "unconditioned_query",
    "original_query",
    "images",
    "fewshot_sorting_class",
)
"""The `Doc` fields of the question itself, encoded for each doc."""

RUN_FIELDS = (
    "sampling_methods",
    "generation_size",
    "stop_sequences",
    "num_samples",
    "use_logits",
    "generation_grammar",
)
"""The `Doc` fields a run sets, usually one value (one object) for all of a task's docs; their
encoding is kept per distinct set of objects. `id`, `task_name` and the examples are covered
separately."""

DIGEST_SIZE = 8
"""Bytes per doc hash: 16 hex digits; a collision among one task's docs is out of reach."""


def doc_content(doc: Doc, with_query: bool = True, legacy: bool = False) -> str:
    """The canonical text of a doc's own content fields (see `CONTENT_FIELDS`).

    Without `with_query` the query is left out (`null`: a validated query is a string), for a
    caller that hashes the query's own bytes, which is cheaper than escaping it as JSON.
    `legacy` encodes as format 2 did (mapping keys as JSON strings, image paths as written),
    to verify a format-2 file; a doc without mappings or image paths encodes the same either way.
    """
    images = doc.images
    specific = doc.specific
    if specific is not None and not legacy:
        specific = typed_keys(specific, "specific")
    return canonical(
        [
            doc.query if with_query else None,
            doc.choices,
            doc.gold_index,
            doc.instruction,
            specific,
            doc.unconditioned_query,
            doc.original_query,
            None if images is None else [image_digest(image, not legacy) for image in images],
            doc.fewshot_sorting_class,
        ],
        CONTENT_FIELDS,
    )


def run_content(doc: Doc, legacy: bool = False) -> str:
    """The canonical text of a doc's run fields (see `RUN_FIELDS`; `legacy` as above)."""
    values = [getattr(doc, name) for name in RUN_FIELDS]
    if not legacy and values[-1] is not None:
        values[-1] = typed_keys(values[-1], "generation_grammar")
    return canonical(values, RUN_FIELDS)


class DocHasher:
    """Hashes a task's docs, sharing the work for docs with the same instruction and examples.

    A plain prompt is `head + query` (see `rendering.plain_prompt_head`). Docs drawing the same
    examples share the head, so the head and the examples' own content are hashed once and the
    hash state is copied: only the work is shared, not the meaning.

    A hasher serves one pass over docs that stay unchanged while it hashes them (a build's
    docs, after the build): what it shares is found by the objects' identity. A task's docs
    usually hold the very same examples list and run field objects, so the previous doc's are
    tried first, in a few identity checks.
    """

    def __init__(self, legacy: bool = False) -> None:
        self.legacy = legacy
        """Hash as format 2 did (see `doc_content`)."""
        self._heads: dict[tuple[Any, ...], Any] = {}
        self._examples: dict[int, bytes] = {}
        self._runs: dict[tuple[Any, ...], bytes] = {}
        self._last_head: tuple[list[Doc], str | None, Any] | None = None
        self._last_run: tuple[tuple[Any, ...], bytes] | None = None

    def digest(self, doc: Doc) -> str:
        """The doc's hash: its prompt, its content fields, its run fields and its examples.

        The query's bytes go in as they are, once when the prompt ends with the query itself,
        else after the prompt's (stripped) query; the other fields as canonical JSON. The
        parts are joined and hashed in one update, which hashes the same bytes as one update
        per part.
        """
        state = self._head(doc).copy()
        query = doc.query
        shown = plain_prompt_query(doc)
        parts: list[bytes] = []
        for text in (shown,) if shown is query else (shown, query):
            encoded = text.encode("utf-8", "surrogatepass")
            parts += (len(encoded).to_bytes(8, "little"), encoded)  # lengths keep parts apart
        content = doc_content(doc, with_query=False, legacy=self.legacy)
        parts += (content.encode("utf-8", "surrogatepass"), self._run_bytes(doc))
        state.update(b"".join(parts))
        return str(state.hexdigest())

    def _head(self, doc: Doc) -> Any:
        """The hash state after the doc's prompt head and examples (see `_head_state`)."""
        examples, instruction = doc.fewshot_samples, doc.instruction
        last = self._last_head
        if last is not None and last[0] is examples and last[1] == instruction:
            return last[2]
        # Examples are the sampler's cached pool, alive for the whole build: ids are stable.
        key = (instruction, *map(id, examples))
        head = self._heads.get(key)
        if head is None:
            head = self._heads[key] = self._head_state(doc)
        self._last_head = (examples, instruction, head)
        return head

    def _run_bytes(self, doc: Doc) -> bytes:
        """The run fields' encoding, kept per distinct set of field objects (a run sets one
        list object, or one value, for all of a task's docs)."""
        fields = (
            doc.sampling_methods,
            doc.generation_size,
            doc.stop_sequences,
            doc.num_samples,
            doc.use_logits,
            doc.generation_grammar,
        )
        last = self._last_run
        if last is not None:
            seen = last[0]
            if (
                fields[0] is seen[0]
                and fields[1] is seen[1]
                and fields[2] is seen[2]
                and fields[3] is seen[3]
                and fields[4] is seen[4]
                and fields[5] is seen[5]
            ):
                return last[1]
        # Whole numbers by type and value (`True == 1`, yet they encode apart), the rest by
        # object (`-0.0 == 0.0`, and `1.0` is not `1`).
        key = tuple(
            (type(value), value) if type(value) in (int, bool) else id(value) for value in fields
        )
        known = self._runs.get(key)
        if known is None:
            encoded = run_content(doc, self.legacy).encode("utf-8", "surrogatepass")
            known = self._runs[key] = b"\x1e" + encoded
        self._last_run = (fields, known)
        return known

    def _head_state(self, doc: Doc) -> Any:
        """A hash state over the prompt head and each example's id and content."""
        state = hashlib.blake2b(
            plain_prompt_head(doc).encode("utf-8", "surrogatepass"), digest_size=DIGEST_SIZE
        )
        for example in doc.fewshot_samples:
            state.update(self._example_bytes(example))
        state.update(b"\x1d")
        return state

    def _example_bytes(self, example: Doc) -> bytes:
        """An example's id and content, encoded once per example."""
        known = self._examples.get(id(example))
        if known is None:
            known = self._examples[id(example)] = (
                f"\x1f{example.id}\x1f{doc_content(example, legacy=self.legacy)}"
                f"\x1e{run_content(example, self.legacy)}"
            ).encode("utf-8", "surrogatepass")
        return known
