"""Few-shot example selection: the five lighteval selections, on private generators only.

A pool is prepared once per (variance seed, shot count) from the task's few-shot docs; each
evaluated doc then draws from it, minus any drawn doc equal in content to itself
(docs/differences-from-lighteval.md, prompt step 5).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from itertools import cycle
from typing import Any, NamedTuple

from ..errors import FewShotError
from .doc import Doc, golds_or_none, live_key

SELECTIONS = ("balanced", "random", "sequential", "random_sampling_from_train", "random_sampling")
PER_DOC_DRAWS = frozenset({"random_sampling", "random_sampling_from_train"})
"""Selections that draw a fresh random sample for every doc; the others use the whole pool."""


class FewShotSampler:
    """Draws few-shot examples for a task's docs, reproducibly and without global state."""

    def __init__(
        self,
        pool_docs: Callable[[], list[Doc]],
        selection: str | None = None,
        task_name: str = "<task>",
    ) -> None:
        """`pool_docs` is called lazily, so a 0-shot task never loads its few-shot split."""
        selection = selection or "balanced"
        if selection not in SELECTIONS:
            raise FewShotError(
                f"task {task_name!r}: few_shots_select {selection!r} is not one of "
                f"{', '.join(SELECTIONS)}"
            )
        self.selection = selection
        self.task_name = task_name
        self._pool_docs = pool_docs
        self._prepared: dict[tuple[int, int], _Prepared] = {}

    def sample(
        self,
        num_fewshots: int,
        variance_seed: int = 0,
        rng: random.Random | None = None,
        doc: Doc | None = None,
    ) -> list[Doc]:
        """The examples for `doc`: drawn from the prepared pool, leaks removed, cut to n."""
        return self.sample_each(num_fewshots, [doc], variance_seed, rng)[0]

    def sample_each(
        self,
        num_fewshots: int,
        docs: Sequence[Doc | None],
        variance_seed: int = 0,
        rng: random.Random | None = None,
    ) -> list[list[Doc]]:
        """`sample` for each of `docs` in turn (so `rng` is consumed in the same order).

        One call per task rather than one per doc: this loop runs for every evaluated doc, so
        its common path is a set lookup and a slice. Only a doc whose query is in the pool
        can equal a pool doc, so the full content comparison is rarely needed. The returned
        lists are read, never edited (at 0 shots they are one shared empty list).
        """
        if num_fewshots == 0:
            none: list[Doc] = []
            return [none] * len(docs)  # one empty list for all: the lists are not edited
        prepared = self._prepared.get((variance_seed, num_fewshots))
        if prepared is None:
            prepared = self._prepare(num_fewshots, variance_seed)
        pool, queries = prepared
        draw_rng = rng if self.selection in PER_DOC_DRAWS else None
        samples: list[list[Doc]] = []
        shown: set[int] = set()
        shared = pool[:num_fewshots]  # the examples of every doc that draws none of its own
        for example in shared if draw_rng is None else ():
            self._check_shown(example)
            shown.add(live_key(example))
        for doc in docs:
            if draw_rng is None and (doc is None or not _may_be_in(doc, queries)):
                samples.append(shared)  # one list for all such docs: a large task's memory
                continue
            drawn = pool if draw_rng is None else self._draw(pool, num_fewshots, draw_rng)
            if doc is not None and _may_be_in(doc, queries):
                drawn = [example for example in drawn if not same_content(example, doc)]
            examples = drawn[:num_fewshots]
            for example in examples:
                if live_key(example) not in shown:
                    self._check_shown(example)
                    shown.add(live_key(example))
            samples.append(examples)
        return samples

    def _check_shown(self, example: Doc) -> None:
        """A few-shot example is shown with its first gold: one without any (no choices) is an
        error, as it is in lighteval."""
        golds = golds_or_none(example)
        if not golds:
            raise FewShotError(
                f"task {self.task_name!r}: few-shot example id {example.id} has no gold answer "
                f"to show after its question (choices {_short(example.choices)}, gold_index "
                f"{example.gold_index!r}); lighteval cannot render this task with few-shot "
                f"examples either: check it at 0 shots"
            )

    def prepared_pool(self, num_fewshots: int, variance_seed: int = 0) -> list[Doc]:
        """The pool for one seed, prepared on first use and then reused for every doc."""
        prepared = self._prepared.get((variance_seed, num_fewshots))
        if prepared is None:
            prepared = self._prepare(num_fewshots, variance_seed)
        return prepared.docs

    def _prepare(self, num_fewshots: int, variance_seed: int) -> _Prepared:
        """Build and cache one seed's pool, with the set of its queries for leak checks.

        Pool docs are treated as fixed once prepared, as the prepared order itself is.
        """
        docs = self._pool_docs()
        if self.selection == "sequential":
            pool = rotated(docs, num_fewshots * variance_seed)
        elif self.selection == "balanced":
            try:
                pool = balanced(docs, num_fewshots + 1, variance_seed)
            except FewShotError as exc:
                raise FewShotError(f"task {self.task_name!r}: {exc}") from None
        else:
            pool = shuffled(docs, variance_seed)
        prepared = _Prepared(pool, _queries(pool))
        self._prepared[(variance_seed, num_fewshots)] = prepared
        return prepared

    def _draw(self, pool: list[Doc], num_fewshots: int, rng: random.Random) -> list[Doc]:
        """Per-doc random sample for the `*_sampling*` selections."""
        count = num_fewshots if self.selection == "random_sampling_from_train" else num_fewshots + 1
        if count > len(pool):
            raise FewShotError(
                f"task {self.task_name!r}: few_shots_select {self.selection!r} draws {count} "
                f"examples per doc for {num_fewshots} shots, but the few-shot pool has only "
                f"{len(pool)} docs; lower the shot count or use a larger few-shot split"
            )
        return rng.sample(pool, count)


class _Prepared(NamedTuple):
    """A prepared pool: its docs in draw order, and their queries (None if unhashable)."""

    docs: list[Doc]
    queries: frozenset[Any] | None


def _queries(pool: list[Doc]) -> frozenset[Any] | None:
    """The pool's queries as a set, or None when one is unhashable (then every doc is checked)."""
    try:
        return frozenset([doc.query for doc in pool])
    except TypeError:
        return None


def _may_be_in(doc: Doc, queries: frozenset[Any] | None) -> bool:
    """False only when no pool doc can have `doc`'s content, because none has its query."""
    if queries is None:
        return True
    try:
        return doc.query in queries
    except TypeError:  # an unhashable query: let the full comparison decide
        return True


def same_content(a: Doc, b: Doc) -> bool:
    """Equal as questions: query, choices, gold and instruction (cheapest comparison first)."""
    return (
        a.query == b.query
        and a.choices == b.choices
        and a.gold_index == b.gold_index
        and a.instruction == b.instruction
    )


def rotated(docs: list[Doc], steps: int) -> list[Doc]:
    """A copy rotated left by `steps`: the cached docs themselves are never moved."""
    if not docs:
        return []
    steps %= len(docs)
    return docs[steps:] + docs[:steps]


def shuffled(docs: list[Doc], seed: int) -> list[Doc]:
    """Seed 0 keeps file order; other seeds shuffle a copy with their own generator."""
    pool = list(docs)
    if seed != 0:
        random.Random(seed).shuffle(pool)
    return pool


def balanced(docs: list[Doc], count: int, seed: int) -> list[Doc]:
    """Round-robin over labels, largest buckets first, popping a random member of each.

    Draws the same sequence as lighteval's balanced selection, whose generator is the global
    one reseeded with `seed`; here it is a private `random.Random(seed)`.
    """
    r = random.Random(seed)
    buckets: dict[Any, list[Doc]] = defaultdict(list)
    for doc in docs:
        buckets[label_of(doc)].append(doc)
    by_size: dict[int, list[Any]] = defaultdict(list)
    for label in _sorted_labels(buckets):
        by_size[len(buckets[label])].append(label)
    order: list[Any] = []
    for size in sorted(by_size, reverse=True):
        tied = by_size[size]
        r.shuffle(tied)
        order.extend(tied)
    chosen: list[Doc] = []
    wanted = min(len(docs), count)
    labels = cycle(order)
    while len(chosen) < wanted:
        bucket = buckets[next(labels)]
        if bucket:
            chosen.append(bucket.pop(r.randrange(len(bucket))))
    return chosen


def label_of(doc: Doc) -> Any:
    """The balancing label: `fewshot_sorting_class`, or the first gold when that is empty."""
    if doc.fewshot_sorting_class:
        return doc.fewshot_sorting_class
    golds = golds_or_none(doc)
    if not golds:
        raise FewShotError(
            f"few-shot pool doc id {doc.id} has neither a "
            f"fewshot_sorting_class nor a gold answer (choices {_short(doc.choices)}), so "
            f"balanced sampling cannot place it (lighteval fails on it too): check the task "
            f"at 0 shots, or set few_shots_select"
        )
    return golds[0]


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _sorted_labels(buckets: dict[Any, list[Doc]]) -> list[Any]:
    """Labels in sorted order; mixed types sort by type name first instead of crashing."""
    try:
        return sorted(buckets)
    except TypeError:
        return sorted(buckets, key=lambda label: (type(label).__name__, repr(label)))
