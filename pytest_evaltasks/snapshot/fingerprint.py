"""Per-doc content hashes: everything a model is sent or scored against, and nothing else.

A doc's hash covers its rendered plain prompt, every `Doc` field a model or a metric reads
(canonically encoded, see `canonical`), and the ids and content of its few-shot examples. It
does not depend on run settings (system prompt, chat template): those are recorded beside the
hashes, so a changed setting is named as a setting and can never hide a content change.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ..engine.rendering import plain_prompt_head, plain_prompt_query
from .canonical import canonical, image_digest

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
    "sampling_methods",
    "generation_size",
    "stop_sequences",
    "num_samples",
    "use_logits",
    "generation_grammar",
    "fewshot_sorting_class",
)
"""The `Doc` fields a hash covers; `id`, `task_name` and the examples are covered separately."""

DIGEST_SIZE = 8
"""Bytes per doc hash: 16 hex digits; a collision among one task's docs is out of reach."""


def doc_content(doc: Doc) -> str:
    """The canonical text of a doc's content fields (see `CONTENT_FIELDS`)."""
    images = doc.images
    return canonical(
        [
            doc.query,
            doc.choices,
            doc.gold_index,
            doc.instruction,
            doc.specific,
            doc.unconditioned_query,
            doc.original_query,
            None if images is None else [image_digest(image) for image in images],
            doc.sampling_methods,
            doc.generation_size,
            doc.stop_sequences,
            doc.num_samples,
            doc.use_logits,
            doc.generation_grammar,
            doc.fewshot_sorting_class,
        ],
        CONTENT_FIELDS,
    )


class DocHasher:
    """Hashes a task's docs, sharing the work for docs with the same instruction and examples.

    A plain prompt is `head + query` (see `rendering.plain_prompt_head`). Docs drawing the same
    examples share the head, so the head and the examples' own content are hashed once and the
    hash state is copied: only the work is shared, not the meaning.
    """

    def __init__(self) -> None:
        self._heads: dict[tuple[Any, ...], Any] = {}
        self._examples: dict[int, bytes] = {}

    def digest(self, doc: Doc) -> str:
        """The doc's hash: its prompt, its content fields, and its examples."""
        # Examples are the sampler's cached pool, alive for the whole build: ids are stable.
        key = (doc.instruction, *map(id, doc.fewshot_samples))
        head = self._heads.get(key)
        if head is None:
            head = self._heads[key] = self._head_state(doc)
        state = head.copy()
        state.update(plain_prompt_query(doc).encode("utf-8", "surrogatepass"))
        state.update(b"\x1e" + doc_content(doc).encode("utf-8", "surrogatepass"))
        return str(state.hexdigest())

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
                f"\x1f{example.id}\x1f{doc_content(example)}".encode("utf-8", "surrogatepass")
            )
        return known


def fingerprint(doc_hashes: dict[str, str]) -> str:
    """One hash over every doc's hash: equal fingerprints mean equal content for all docs."""
    lines = "".join(f"{label} {digest}\n" for label, digest in doc_hashes.items())
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()
