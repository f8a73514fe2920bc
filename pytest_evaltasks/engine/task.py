"""`Task`: one requested task (a config at a shot count) turned into docs with few-shot examples.

Follows lighteval's `LightevalTask.get_docs` step for step (prompt steps 3-4 of
docs/differences-from-lighteval.md): the same doc order, the same shared `random.Random(42)`
consumed doc by doc, the same few-shot split choice, and the global generators seeded as
lighteval's pipeline seeds them while the prompt function runs.
`Task.build` returns one finished `TaskResult`; later steps only read it.
"""

from __future__ import annotations

import copy
import random
import warnings
import weakref
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DatasetError, EvalTaskError, PromptFunctionError
from .collection import CHECKPOINT_ROWS, checkpoint, long_lived
from .doc import Doc, SamplingMethod, check_doc, doc_like, live_key
from .fewshot import FewShotSampler
from .metrics import metric_category
from .rows import Row, RowSource, preview
from .seeding import numpy_seeded, reference_seeds
from .task_string import TaskRequest

if TYPE_CHECKING:  # annotations only: the config module loads pydantic_core
    from .config import TaskConfig

FEWSHOT_SPLIT_PRIORITY = ("train", "dev", "valid", "default")
DEFAULT_AVAILABLE = ["train", "validation", "test"]
"""lighteval's default `hf_avail_splits`."""


class FewShotFromEvalWarning(UserWarning):
    """The few-shot pool is built from the evaluation split: a classic contamination source."""


@dataclass(frozen=True)
class TaskResult:
    """One task's finished docs, in evaluation order, and the facts about its few-shot pool.

    `docs` pairs each doc with its label: its id, or `split/id` when ids repeat across several
    evaluation splits. The docs and their examples are shared with the task's caches: read them,
    do not edit them (`Task.get_docs` gives copies that may be edited).
    """

    request: TaskRequest
    docs: list[tuple[str, Doc]]
    num_eval_docs: int
    pool_size: int | None
    """Docs in the few-shot pool; None at 0 shots, where the pool is never loaded."""
    shortfall: int
    """Docs that got fewer examples than requested (the pool was too small)."""
    pool_from_eval: bool
    """No few-shot split: the pool is built from the evaluation splits themselves."""
    pool_in_eval: bool = False
    """The pool's split is an evaluation split (chosen, or for want of another)."""


class Task:
    """A task as requested: its config, the request (shots, metric parameters) and its docs."""

    def __init__(
        self,
        config: TaskConfig,
        data_dir: str | Path | None = None,
        metric_params: dict[str, Any] | None = None,
        request: TaskRequest | None = None,
    ) -> None:
        """Without a `request`, the config's own `num_fewshots` and `metric_params` are used.

        The task never changes `config`: a request at another shot count works on a copy.
        """
        if request is None:
            request = TaskRequest(
                config.name, config.num_fewshots, tuple((metric_params or {}).items())
            )
        self.request = request
        self.config = (
            config
            if config.num_fewshots == request.num_fewshots
            else _with_shots(config, request.num_fewshots)
        )
        self.metric_params: dict[str, Any] = request.params_dict
        self.source = RowSource.for_config(config, Path(data_dir) if data_dir else None)
        # The sampler reaches the pool through a weak reference: a task and its sampler would
        # otherwise form a cycle, and a cycle holding every doc of a large task lives until
        # the collector's next full pass (at the end of a pytest session, at the latest).
        owner = weakref.ref(self)
        self.sampler = FewShotSampler(
            lambda: _alive(owner)._pool(), config.few_shots_select, config.name
        )
        self._eval_docs: list[Doc] | None = None
        self._eval_labels: list[str] = []
        self._rows_read = 0
        self._fewshot_docs: list[Doc] | None = None

    @property
    def name(self) -> str:
        """The registered task name, e.g. `mmlu:anatomy`."""
        return self.config.name

    @property
    def num_fewshots(self) -> int:
        """Few-shot examples per doc, from the task string."""
        return self.request.num_fewshots

    @property
    def full_name(self) -> str:
        """`name|shots`, as lighteval names a task run."""
        return self.request.full_name

    @property
    def display_name(self) -> str:
        """`name@k=v|shots`: the task string that reproduces this task, parameters included."""
        return self.request.label

    @property
    def version(self) -> int | str:
        """The task's declared prompt/data version."""
        return self.config.version

    @cached_property
    def fewshot_splits(self) -> list[str] | None:
        """The split(s) the few-shot pool comes from; None means the evaluation splits."""
        chosen = self.config.few_shots_split
        if isinstance(chosen, list) and chosen:
            return list(chosen)
        if isinstance(chosen, str) and chosen:
            return [chosen]
        found = first_fewshot_split(
            self.config.hf_avail_splits or [], self.config.evaluation_splits
        )
        return None if found is None else [found]

    @property
    def fewshot_split(self) -> str | None:
        """The few-shot split's name (splits joined by `, `); None means the evaluation splits."""
        splits = self.fewshot_splits
        return None if splits is None else ", ".join(splits)

    @property
    def fewshot_from_eval(self) -> bool:
        """True when examples are drawn from the data being evaluated."""
        return self.fewshot_splits is None

    # building ------------------------------------------------------------------------------

    def build(self, max_samples: int | None = None, variance_seed: int = 0) -> TaskResult:
        """Every doc in evaluation order with its examples and run settings, and pool facts."""
        order, rnd = self._evaluation_order(max_samples)
        docs = self._runtime_docs(order, rnd, variance_seed)
        labels = self._eval_labels
        shots = self.num_fewshots
        return TaskResult(
            request=self.request,
            docs=[(labels[position], doc) for position, doc in zip(order, docs, strict=True)],
            num_eval_docs=len(labels),
            pool_size=len(self._pool()) if shots else None,
            shortfall=sum(1 for doc in docs if len(doc.fewshot_samples) < shots),
            pool_from_eval=self.fewshot_from_eval,
            pool_in_eval=self.fewshot_from_eval
            or bool(set(self.fewshot_splits or []) & set(self.config.evaluation_splits)),
        )

    def eval_docs(self) -> list[Doc]:
        """The evaluation docs in file order (cached; deduplicated when the config asks)."""
        self._materialise()
        assert self._eval_docs is not None
        return self._eval_docs

    def fewshot_docs(self) -> list[Doc]:
        """The few-shot pool in file order; built from the eval splits when no split is left."""
        if self.fewshot_from_eval:
            warnings.warn(
                f"task {self.name!r} builds its few-shot pool from its evaluation "
                f"split(s) {', '.join(self.config.evaluation_splits)}",
                FewShotFromEvalWarning,
                stacklevel=2,
            )
        return self._pool()

    def get_docs(self, max_samples: int | None = None, variance_seed: int = 0) -> list[Doc]:
        """Docs in evaluation order with few-shot examples and generation settings set.

        The docs are the caller's own: editing one (its choices, its examples) changes nothing
        for a later call.
        """
        return [doc for _, doc in self.labelled_docs(max_samples, variance_seed)]

    def labelled_docs(
        self, max_samples: int | None = None, variance_seed: int = 0
    ) -> list[tuple[str, Doc]]:
        """`get_docs` with each doc's label (see `TaskResult.docs`)."""
        if self.num_fewshots and self.fewshot_from_eval:
            self.fewshot_docs()  # the library's warning; the plugin reads `pool_from_eval`
        result = self.build(max_samples, variance_seed)
        memo: dict[int, Doc] = {}
        return [(label, detached(doc, memo)) for label, doc in result.docs]

    def _pool(self) -> list[Doc]:
        """The few-shot docs, built with the eval docs under the reference seeds."""
        self._materialise(with_pool=True)
        assert self._fewshot_docs is not None
        return self._fewshot_docs

    def _materialise(self, with_pool: bool | None = None) -> None:
        """Build the eval docs, then (for a few-shot request) the pool, as lighteval orders them.

        Both run in one seeded stretch: lighteval seeds the global generators once, builds the
        eval docs, then builds the pool lazily when the first doc draws its examples. A prompt
        function that imported numpy during the build ran with numpy unseeded, so the build is
        redone once with numpy seeded.
        """
        pool_wanted = self.num_fewshots > 0 if with_pool is None else with_pool
        if self._eval_docs is not None and (self._fewshot_docs is not None or not pool_wanted):
            return
        if self._eval_docs is not None:  # eval docs alone were asked for before
            self._eval_docs = None
        had_numpy = numpy_seeded()
        self._build_all(pool_wanted)
        if not had_numpy and numpy_seeded():
            self._build_all(pool_wanted)

    def _build_all(self, with_pool: bool) -> None:
        """One seeded build of the eval docs and, when wanted, the few-shot pool."""
        with reference_seeds(), long_lived():
            docs: list[Doc] = []
            labels: list[str] = []
            several = len(self.config.evaluation_splits) > 1
            self._rows_read = 0
            for split in self.config.evaluation_splits:
                rows = self.source.rows(split)
                self._rows_read += len(rows)
                split_docs = self._split_docs(split, rows, few_shots=False)
                del rows
                docs.extend(split_docs)
                labels.extend(f"{split}/{doc.id}" if several else doc.id for doc in split_docs)
            if self.config.must_remove_duplicate_docs:
                kept = remove_duplicate_docs(docs)
                labels = [labels[i] for i in kept]
                docs = [docs[i] for i in kept]
            pool: list[Doc] | None = None
            if with_pool:
                splits = self.fewshot_splits or self.config.evaluation_splits
                pool = []
                for split in splits:
                    pool.extend(self._split_docs(split, self._pool_rows(split), few_shots=True))
        self._eval_docs, self._eval_labels, self._fewshot_docs = docs, labels, pool

    def _pool_rows(self, split: str) -> list[Row]:
        """The rows of a few-shot split; a missing one that was picked from `hf_avail_splits`
        says so, since that list (by default train, validation, test) is the cause."""
        try:
            return self.source.rows(split)
        except DatasetError as exc:
            if self.config.few_shots_split:
                raise
            available = self.config.hf_avail_splits
            raise DatasetError(
                f"{exc}\nThe few-shot split {split!r} was picked from hf_avail_splits "
                f"({available!r}{', the default' if available == DEFAULT_AVAILABLE else ''}): "
                f"set hf_avail_splits to the splits the dataset has, or name few_shots_split"
            ) from exc.__cause__

    def _evaluation_order(self, max_samples: int | None) -> tuple[list[int], random.Random]:
        """Positions of the eval docs in evaluation order, and the generator that shuffled
        them: lighteval keeps drawing few-shot samples from that same generator."""
        source_docs = self.eval_docs()
        if not source_docs:
            splits = ", ".join(self.config.evaluation_splits)
            empty = "are empty" if self.config.hf_filter is None else "keep no row after hf_filter"
            why = (
                f"split(s) {splits} at {self.source.location} {empty}"
                if not self._rows_read
                else f"every row of {splits} at {self.source.location} was dropped by its "
                f"prompt function"
            )
            raise EvalTaskError(f"task {self.name!r} has no documents to evaluate: {why}")
        # Shuffling positions draws exactly what shuffling the docs would (same length).
        order = list(range(len(source_docs)))
        rnd = random.Random(42)
        rnd.shuffle(order)
        if max_samples is not None:
            order = order[:max_samples]
        return order, rnd

    def _runtime_docs(self, order: list[int], rnd: random.Random, variance_seed: int) -> list[Doc]:
        """The eval docs at `order`, each given its few-shot samples.

        The docs are the task's own (their run settings were set when they were built), so
        only the examples change; a later build with another variance seed gives them other
        examples, which is why a `TaskResult` is read before the task is built again.
        """
        source_docs = self.eval_docs()
        docs = [source_docs[position] for position in order]
        shots = self.sampler.sample_each(self.num_fewshots, docs, variance_seed, rnd)
        for doc, examples in zip(docs, shots, strict=True):
            doc.fewshot_samples = examples
        return docs

    @cached_property
    def _num_samples(self) -> int:
        """Samples per doc: the most any sampling metric or the config asks for, at least 1."""
        wanted = [1, *(self.config.num_samples or [])]
        wanted += [n for m in self.config.metrics if (n := getattr(m, "num_samples", None))]
        return max(wanted)

    @cached_property
    def _sampling_methods(self) -> list[Any]:
        """The sampling methods the task's metrics need, once each, in metric order.

        lighteval adds them to every doc (from a set, so in no stable order); we keep the order
        of the config's metrics so the docs are the same on every run.
        """
        methods: list[Any] = []
        for metric in self.config.metrics:
            category = metric_category(metric)
            if category is None:
                continue
            method = (
                SamplingMethod(category) if category in SamplingMethod.__members__ else category
            )
            if method not in methods:
                methods.append(method)
        return methods

    def _split_docs(self, split: str, rows: list[Row], few_shots: bool) -> list[Doc]:
        """One split's docs; ids are row indices, so a dropped row still uses up its index.

        `rows` is consumed: each row is released once its doc is made, so a large split's rows
        and docs are not all in memory at once.

        Evaluation docs get their run settings here, once, as lighteval's `get_docs` sets them
        (task name, sampling methods, generation settings, `use_logits`, samples); few-shot
        docs keep what the prompt function and the config gave them, as in lighteval.
        """
        config = self.config
        prompt_function = config.prompt_function
        task_name = config.name
        settings = None if few_shots else self._run_settings()
        docs: list[Doc] = []
        previous: Any = []
        for index, row in enumerate(rows):
            rows[index] = None  # type: ignore[call-overload]  # freed as soon as it is used
            if index and not index % CHECKPOINT_ROWS:
                checkpoint()
            row["__few_shots"] = few_shots
            row["__index"] = index
            try:
                doc = prompt_function(row, task_name)
            except (Exception, SystemExit) as exc:  # a prompt function may call exit()
                raise self._row_error(
                    split, index, row, f"raised {type(exc).__name__}: {exc}"
                ) from exc
            if doc is None or (isinstance(doc, list) and not doc):
                continue
            if type(doc) is not Doc:
                doc = self._as_doc(doc, split, index, row)
            problem = check_doc(doc)
            if problem is not None:
                raise self._row_error(split, index, row, f"returned a Doc whose {problem}")
            if doc.choices == previous:  # the same letters doc after doc: one list for all
                doc.choices = previous
            else:
                previous = doc.choices
            doc.id = str(index)
            doc.generation_grammar = config.generation_grammar
            if settings is None:
                doc.generation_size = config.generation_size
                doc.stop_sequences = config.stop_sequence
            else:
                full_name, methods, stop, num_samples = settings
                doc.task_name = full_name
                doc.sampling_methods = (
                    [*doc.sampling_methods, *methods] if doc.sampling_methods else methods
                )
                doc.generation_size = config.generation_size
                doc.stop_sequences = stop
                doc.use_logits = True if doc.use_logits is None else doc.use_logits
                doc.num_samples = num_samples
            docs.append(doc)
        return docs

    def _run_settings(self) -> tuple[str, list[Any], list[str], int]:
        """What every evaluation doc of this run gets: one list object each, shared."""
        stop = list(self.config.stop_sequence) if self.config.stop_sequence is not None else []
        return self.full_name, list(self._sampling_methods), stop, self._num_samples

    def _as_doc(self, value: Any, split: str, index: int, row: Row) -> Doc:
        """A `Doc` subclass as it is; lighteval's `Doc` converted; anything else refused."""
        if isinstance(value, Doc):
            return value
        doc = doc_like(value)
        if doc is None:
            raise self._row_error(
                split,
                index,
                row,
                f"returned {type(value).__module__}.{type(value).__name__}, not a Doc "
                f"(or None to drop the row)",
            )
        return doc

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
        return f"Task({self.display_name!r})"


def _alive(owner: weakref.ReferenceType[Task]) -> Task:
    """The task behind a weak reference (its sampler is only used while it lives)."""
    task = owner()
    assert task is not None, "a task's sampler outlived its task"
    return task


def _with_shots(config: TaskConfig, num_fewshots: int) -> TaskConfig:
    """A copy of `config` at another shot count: its lists are its own, its callables shared.

    Never a deep copy: a prompt function may be a bound method or hold a lock, a tokenizer or
    a database handle, none of which can (or should) be copied.
    """
    lists = {
        name: list(value)
        for name in (
            "evaluation_splits",
            "hf_avail_splits",
            "stop_sequence",
            "num_samples",
            "metrics",
        )
        if isinstance(value := getattr(config, name), list)
    }
    return config.model_copy(update={"num_fewshots": num_fewshots, **lists})


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


def detached(doc: Doc, memo: dict[int, Doc]) -> Doc:
    """A copy of `doc` whose lists, dicts and examples are its own (examples copied once per
    `memo`, so docs of one call still share their examples, as they would in lighteval).

    Built by one positional constructor call: `get_docs` copies every doc it returns.
    """
    key = live_key(doc)
    known = memo.get(key)
    if known is not None:
        return known
    gold = doc.gold_index
    choices = doc.choices
    copied = Doc(
        doc.query,
        [list(c) if isinstance(c, list) else c for c in choices]
        if isinstance(choices, list)
        else choices,
        list(gold) if isinstance(gold, list) else gold,
        doc.instruction,
        None if doc.images is None else list(doc.images),
        None if doc.specific is None else copy.deepcopy(doc.specific),
        doc.unconditioned_query,
        doc.original_query,
        doc.id,
        doc.task_name,
        [detached(example, memo) for example in doc.fewshot_samples],
        list(doc.sampling_methods),
        doc.fewshot_sorting_class,
        doc.generation_size,
        None if doc.stop_sequences is None else list(doc.stop_sequences),
        doc.use_logits,
        doc.num_samples,
        doc.generation_grammar,
    )
    memo[key] = copied
    return copied
