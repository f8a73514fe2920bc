"""`Task`: one requested task (a config at a shot count) turned into docs with few-shot examples.

Follows lighteval's `LightevalTask.get_docs` step for step (SPEC 3.2-3.3): the same doc order,
the same shared `random.Random(42)` consumed doc by doc, the same few-shot split choice.
"""

from __future__ import annotations

import gc
import random
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EvalTaskError, PromptFunctionError
from .doc import Doc
from .fewshot import FewShotSampler
from .rows import Row, RowSource, preview
from .task_string import request_label

if TYPE_CHECKING:  # annotations only: importing config loads pydantic (a quarter second)
    from .config import TaskConfig

FEWSHOT_SPLIT_PRIORITY = ("train", "dev", "valid", "default")


class FewShotFromEvalWarning(UserWarning):
    """The few-shot pool is built from the evaluation split: a classic contamination source."""


class Task:
    """A task as requested: config copy, shot count, metric parameters, and its docs."""

    def __init__(
        self,
        config: TaskConfig,
        data_dir: str | Path | None = None,
        metric_params: dict[str, Any] | None = None,
    ) -> None:
        """`config` must already be this request's own copy (the registry deep-copies)."""
        self.config = config
        self.metric_params: dict[str, Any] = dict(metric_params or {})
        self.source = RowSource.for_config(config, Path(data_dir) if data_dir else None)
        self.sampler = FewShotSampler(self.fewshot_docs, config.few_shots_select, config.name)
        self._eval_docs: list[Doc] | None = None
        self._eval_labels: list[str] = []
        self._fewshot_docs: list[Doc] | None = None

    @property
    def name(self) -> str:
        """The registered task name, e.g. `mmlu:anatomy`."""
        return self.config.name

    @property
    def num_fewshots(self) -> int:
        """Few-shot examples per doc, from the task string."""
        return self.config.num_fewshots

    @property
    def full_name(self) -> str:
        """`name|shots`, as lighteval names a task run."""
        return f"{self.config.name}|{self.config.num_fewshots}"

    @property
    def display_name(self) -> str:
        """`name@k=v|shots`: the task string that reproduces this task, parameters included."""
        return request_label(self.config.name, self.config.num_fewshots, self.metric_params.items())

    @property
    def version(self) -> int | str:
        """The task's declared prompt/data version."""
        return self.config.version

    @cached_property
    def fewshot_split(self) -> str | None:
        """The split the few-shot pool comes from; None means the evaluation splits."""
        return self.config.few_shots_split or first_fewshot_split(
            self.config.hf_avail_splits or [], self.config.evaluation_splits
        )

    @property
    def fewshot_from_eval(self) -> bool:
        """True when examples are drawn from the data being evaluated."""
        return self.fewshot_split is None

    def eval_docs(self) -> list[Doc]:
        """The evaluation docs in file order (cached; deduplicated when the config asks)."""
        if self._eval_docs is None:
            docs: list[Doc] = []
            labels: list[str] = []
            several = len(self.config.evaluation_splits) > 1
            for split in self.config.evaluation_splits:
                split_docs = self._load_split(split, few_shots=False)
                docs.extend(split_docs)
                labels.extend(f"{split}/{doc.id}" if several else doc.id for doc in split_docs)
            if self.config.must_remove_duplicate_docs:
                kept = remove_duplicate_docs(docs)
                labels = [labels[i] for i in kept]
                docs = [docs[i] for i in kept]
            self._eval_docs, self._eval_labels = docs, labels
        return self._eval_docs

    def fewshot_docs(self) -> list[Doc]:
        """The few-shot pool in file order; built from the eval splits when no split is left."""
        if self._fewshot_docs is None:
            if self.fewshot_split is None:
                warnings.warn(
                    f"task {self.name!r} builds its few-shot pool from its evaluation "
                    f"split(s) {', '.join(self.config.evaluation_splits)}",
                    FewShotFromEvalWarning,
                    stacklevel=2,
                )
                splits = self.config.evaluation_splits
            else:
                splits = [self.fewshot_split]
            self._fewshot_docs = self._build_docs(splits, few_shots=True)
        return self._fewshot_docs

    def get_docs(self, max_samples: int | None = None, variance_seed: int = 0) -> list[Doc]:
        """Docs in evaluation order with few-shot examples and generation settings set.

        Returns new `Doc` objects on every call, so calls never disturb each other's results.
        """
        return [doc for _, doc in self.labelled_docs(max_samples, variance_seed)]

    def labelled_docs(
        self, max_samples: int | None = None, variance_seed: int = 0
    ) -> list[tuple[str, Doc]]:
        """`get_docs` with each doc's label: its id, or `split/id` when ids repeat across
        several evaluation splits."""
        order, rnd = self._evaluation_order(max_samples)
        docs = self._runtime_docs(order, rnd, variance_seed)
        labels = self._eval_labels
        return [(labels[position], doc) for position, doc in zip(order, docs, strict=True)]

    def _evaluation_order(self, max_samples: int | None) -> tuple[list[int], random.Random]:
        """Positions of the eval docs in evaluation order, and the generator that shuffled
        them: lighteval keeps drawing few-shot samples from that same generator."""
        source_docs = self.eval_docs()
        if not source_docs:
            raise EvalTaskError(
                f"task {self.name!r} has no documents to evaluate: every row of "
                f"{', '.join(self.config.evaluation_splits)} at {self.source.location} was "
                f"dropped by its prompt function or hf_filter"
            )
        # Shuffling positions draws exactly what shuffling the docs would (same length).
        order = list(range(len(source_docs)))
        rnd = random.Random(42)
        rnd.shuffle(order)
        if max_samples is not None:
            order = order[:max_samples]
        return order, rnd

    def _runtime_docs(self, order: list[int], rnd: random.Random, variance_seed: int) -> list[Doc]:
        """Fresh copies of the eval docs at `order`, with few-shot samples and run settings.

        Runs once per evaluated doc, so each doc is built by one constructor call; the sampler
        is given the templates, whose content fields the copies share.
        """
        source_docs = self.eval_docs()
        config = self.config
        full_name = self.full_name
        generation_size = config.generation_size
        num_samples = max(config.num_samples) if config.num_samples else 1
        stop = list(config.stop_sequence) if config.stop_sequence is not None else []
        templates = [source_docs[position] for position in order]
        with paused_gc():
            shots = self.sampler.sample_each(config.num_fewshots, templates, variance_seed, rnd)
            return [
                _runtime_copy(template, full_name, examples, generation_size, stop, num_samples)
                for template, examples in zip(templates, shots, strict=True)
            ]

    def _build_docs(self, splits: list[str], few_shots: bool) -> list[Doc]:
        """Run the prompt function over every row of `splits`, in order."""
        docs: list[Doc] = []
        for split in splits:
            docs.extend(self._load_split(split, few_shots))
        return docs

    def _load_split(self, split: str, few_shots: bool) -> list[Doc]:
        """Read one split and turn its rows into docs, with the cyclic GC paused (see
        `paused_gc`): this is where thousands of long-lived rows and docs are created."""
        with paused_gc():
            return self._split_docs(split, self.source.rows(split), few_shots)

    def _split_docs(self, split: str, rows: list[Row], few_shots: bool) -> list[Doc]:
        """One split's docs; ids are row indices, so a dropped row still uses up its index."""
        config = self.config
        prompt_function = config.prompt_function
        task_name = config.name
        docs: list[Doc] = []
        for index, row in enumerate(rows):
            row["__few_shots"] = few_shots
            row["__index"] = index
            try:
                doc = prompt_function(row, task_name)
            except Exception as exc:
                raise self._row_error(
                    split, index, row, f"raised {type(exc).__name__}: {exc}"
                ) from exc
            if doc is None or (isinstance(doc, list) and not doc):
                continue
            if not isinstance(doc, Doc):
                raise self._row_error(
                    split,
                    index,
                    row,
                    f"returned {type(doc).__module__}.{type(doc).__name__}, not a "
                    f"pytest_evaltasks Doc (or None to drop the row)",
                )
            doc.id = str(index)
            doc.generation_grammar = config.generation_grammar
            doc.generation_size = config.generation_size
            doc.stop_sequences = config.stop_sequence
            docs.append(doc)
        return docs

    def _row_error(self, split: str, index: int, row: Row, what: str) -> PromptFunctionError:
        """An error that names the task, split, row and the prompt function's file."""
        function = self.config.prompt_function
        code = getattr(function, "__code__", None)
        where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
        name = getattr(function, "__qualname__", repr(function))
        return PromptFunctionError(
            f"task {self.name!r}: prompt function {name}{where} {what} "
            f"on split {split!r}, row {index}: {preview(row)}"
        )

    def __repr__(self) -> str:
        return f"Task({self.full_name!r})"


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a bulk build, then restore its state.

    Creating tens of thousands of objects that stay alive (parsed rows, docs) makes the
    collector rescan the whole heap again and again: about a third of the time to load a
    large task. Rows and docs form no reference cycles, so nothing is lost by collecting
    only afterwards; a cycle made meanwhile (by a prompt function, or another thread) is
    collected once the collector runs again. A collector that was already off stays off.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def first_fewshot_split(available: list[str], evaluation: list[str]) -> str | None:
    """The first non-evaluation split whose name contains train, dev, valid or default."""
    candidates = [split for split in available if split not in evaluation]
    for marker in FEWSHOT_SPLIT_PRIORITY:
        for split in candidates:
            if marker in split:
                return split
    return None


def remove_duplicate_docs(docs: list[Doc]) -> list[int]:
    """Positions of the docs to keep: those whose content (every field but `id`) is new.

    Compared with `==`, field by field (dicts with keys in another order are equal); docs are
    bucketed by query first, so only same-query docs are ever compared.
    """
    fields = [name for name in Doc.__slots__ if name != "id"]
    buckets: dict[str, list[list[Any]]] = {}
    kept: list[int] = []
    for position, doc in enumerate(docs):
        content = [getattr(doc, name) for name in fields]
        bucket = buckets.setdefault(str(doc.query), [])
        if content not in bucket:
            bucket.append(content)
            kept.append(position)
    return kept


def _runtime_copy(
    doc: Doc,
    task_name: str,
    fewshot_samples: list[Doc],
    generation_size: int | None,
    stop_sequences: list[str] | None,
    num_samples: int,
) -> Doc:
    """A fresh doc sharing the prompt function's values, with this run's runtime fields.

    Positional arguments in `Doc` field order: the cheapest way to build a slotted dataclass.
    """
    return Doc(
        doc.query,
        doc.choices,
        doc.gold_index,
        doc.instruction,
        doc.images,
        doc.specific,
        doc.unconditioned_query,
        doc.original_query,
        doc.id,
        task_name,
        fewshot_samples,
        list(doc.sampling_methods),
        doc.fewshot_sorting_class,
        generation_size,
        stop_sequences,
        True,  # use_logits
        num_samples,
        doc.generation_grammar,
    )
