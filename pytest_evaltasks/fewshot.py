"""Few-shot example selection: the five lighteval selections, on private generators only.

A pool is prepared once per (variance seed, shot count) from the task's few-shot docs; each
evaluated doc then draws from it, minus any drawn doc equal in content to itself (SPEC 3.4).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable
from itertools import cycle
from typing import Any

from .doc import Doc
from .errors import FewShotError

SELECTIONS = ("balanced", "random", "sequential", "random_sampling_from_train", "random_sampling")


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
        self._prepared: dict[tuple[int, int], list[Doc]] = {}

    def sample(
        self,
        num_fewshots: int,
        variance_seed: int = 0,
        rng: random.Random | None = None,
        doc: Doc | None = None,
    ) -> list[Doc]:
        """The examples for `doc`: drawn from the prepared pool, leaks removed, cut to n."""
        if num_fewshots == 0:
            return []
        pool = self.prepared_pool(num_fewshots, variance_seed)
        drawn = self._draw(pool, num_fewshots, rng)
        if doc is not None:
            drawn = [example for example in drawn if not same_content(example, doc)]
        return drawn[:num_fewshots]

    def prepared_pool(self, num_fewshots: int, variance_seed: int = 0) -> list[Doc]:
        """The pool for one seed, prepared on first use and then reused for every doc."""
        key = (variance_seed, num_fewshots)
        if key not in self._prepared:
            docs = self._pool_docs()
            if self.selection == "sequential":
                self._prepared[key] = rotated(docs, num_fewshots * variance_seed)
            elif self.selection == "balanced":
                self._prepared[key] = balanced(docs, num_fewshots + 1, variance_seed)
            else:
                self._prepared[key] = shuffled(docs, variance_seed)
        return self._prepared[key]

    def _draw(self, pool: list[Doc], num_fewshots: int, rng: random.Random | None) -> list[Doc]:
        """Per-doc draw: the whole pool, or a random sample for the `*_sampling*` selections."""
        if self.selection not in ("random_sampling", "random_sampling_from_train") or rng is None:
            return pool
        count = num_fewshots if self.selection == "random_sampling_from_train" else num_fewshots + 1
        if count > len(pool):
            raise FewShotError(
                f"task {self.task_name!r}: few_shots_select {self.selection!r} draws {count} "
                f"examples per doc for {num_fewshots} shots, but the few-shot pool has only "
                f"{len(pool)} docs; lower the shot count or use a larger few-shot split"
            )
        return rng.sample(pool, count)


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
    return doc.fewshot_sorting_class or doc.get_golds()[0]


def _sorted_labels(buckets: dict[Any, list[Doc]]) -> list[Any]:
    """Labels in sorted order; mixed types sort by type name first instead of crashing."""
    try:
        return sorted(buckets)
    except TypeError:
        return sorted(buckets, key=lambda label: (type(label).__name__, repr(label)))
