"""lm-eval 0.4.13's own requests: `simple_evaluate` with a model that records what it is sent.

`datasets.load_dataset` is replaced (for the reference run only) by one that reads the same
local data root through `datasets`, into a new cache, and the task folders' modules are
imported afresh: each reference run is a new lm-eval process on a new machine (or, `warm`, the
second one over the same cache). Everything else is lm-eval's, from its `TaskManager` on.
Few-shot examples are recorded by wrapping its sampler classes, as positions in the pool of the
task being built; targets are those lm-eval logs with each sample.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
from lm_eval import simple_evaluate
from lm_eval.api import samplers
from lm_eval.api.model import LM
from lm_eval.api.task import Task
from lm_eval.tasks import TaskManager


@dataclass
class Doc:
    """One doc as lm-eval sent it: its requests (type, arguments, index, repeats) in the order
    the model received them, its target, its few-shot examples (positions in the pool)."""

    doc_id: int
    requests: list[tuple[str, list[Any], int, int]]
    target: Any
    fewshot_ids: list[int]


_MANAGERS: dict[tuple[str, ...], TaskManager] = {}


def manager(include: list[Path] | None = None) -> TaskManager:
    """lm-eval's own TaskManager (the whole index), kept per include path."""
    key = tuple(str(path) for path in include or [])
    if key not in _MANAGERS:
        _MANAGERS[key] = TaskManager(include_path=[str(p) for p in include] if include else None)
    return _MANAGERS[key]


@contextlib.contextmanager
def _local_rows(data_dir: Path, cache: str) -> Iterator[None]:
    """The data root's rows through `datasets`, cached in `cache` (a hook's `.map` runs on the
    first call with a fingerprint, and is reused for the next ones)."""
    real = datasets.load_dataset

    def load(path: Any = None, name: Any = None, **kwargs: Any) -> Any:
        folder = data_dir / str(path) / (name or "default")
        if folder.is_dir():
            files = {p.stem: str(p) for p in sorted(folder.glob("*.jsonl"))}
            return real("json", data_files=files, cache_dir=cache)
        return real(path=path, name=name, **kwargs)

    datasets.load_dataset = load
    try:
        yield
    finally:
        datasets.load_dataset = real


def _as_in_a_new_process(include: list[Path]) -> None:
    """The task folders' modules (`!function` hooks, their helpers) forgotten, so lm-eval
    imports them afresh, as a new `lm_eval` process does: a hook's module-level state starts
    from the beginning on every reference run."""
    import lm_eval.tasks

    tasks = Path(lm_eval.tasks.__file__).parent.resolve()
    folders = [folder.resolve() for folder in include]
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str):
            continue
        folder = Path(file).resolve().parent
        if folder in folders or (folder != tasks and tasks in folder.parents):
            del sys.modules[name]


@contextlib.contextmanager
def _recorded_samples(calls: dict[str, list[tuple[Any, list[Any]]]]) -> Iterator[None]:
    """Each sampler draw, under the name of the task whose requests are being built."""
    classes = [samplers.ContextSampler, samplers.FirstNSampler]
    saved = [cls.__dict__.get("sample") for cls in classes]
    building = Task.build_all_requests
    current: list[str] = []

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def sample(self: Any, *args: Any, **kwargs: Any) -> Any:
            drawn = original(self, *args, **kwargs)
            calls.setdefault(current[-1], []).append((self, list(drawn)))
            return drawn

        return sample

    def build_all_requests(self: Any, *args: Any, **kwargs: Any) -> Any:
        current.append(str(self.config["task"]))
        try:
            return building(self, *args, **kwargs)
        finally:
            current.pop()

    for cls, method in zip(classes, saved, strict=True):
        if method is not None:
            cls.sample = wrap(method)  # type: ignore[method-assign]
    Task.build_all_requests = build_all_requests  # type: ignore[method-assign]
    try:
        yield
    finally:
        Task.build_all_requests = building  # type: ignore[method-assign]
        for cls, method in zip(classes, saved, strict=True):
            if method is not None:
                cls.sample = method  # type: ignore[method-assign]


def reference_tasks(
    name: str | dict[str, Any],
    num_fewshot: int | None,
    data_dir: Path,
    *,
    include: list[Path] | None = None,
    system: str | None = None,
    chat: Callable[[list[dict[str, Any]], bool], str] | None = None,
    multiturn: bool = True,
    limit: int | None = None,
    warm: bool = False,
) -> dict[str, list[Doc]]:
    """What lm-eval 0.4.13 sends for a task, group or tag: per task (lm-eval's name for it),
    doc by doc, in the order its model received them. Each run is a new lm-eval process over a
    new cache; `warm`: a second such process over the first one's cache (what lm-eval sends on
    every run but the first)."""
    sent: list[Any] = []

    class Recorder(LM):  # type: ignore[misc]
        MULTIMODAL = True

        def loglikelihood(self, requests: Any) -> Any:
            sent.extend(requests)
            return [(-1.0, False)] * len(requests)

        def loglikelihood_rolling(self, requests: Any) -> Any:
            sent.extend(requests)
            return [-1.0] * len(requests)

        def generate_until(self, requests: Any) -> Any:
            sent.extend(requests)
            return [""] * len(requests)

        def apply_chat_template(self, history: Any, add_generation_prompt: bool = True) -> str:
            assert chat is not None
            return chat(history, add_generation_prompt)

        @property
        def tokenizer_name(self) -> str:
            return "reference"

        def chat_template(self, chat_template: Any = False) -> str:
            return "reference"

    calls: dict[str, list[tuple[Any, list[Any]]]] = {}
    logging.disable(logging.WARNING)
    try:
        with tempfile.TemporaryDirectory(prefix="lm-eval-reference-") as cache:
            for _ in range(2 if warm else 1):  # each a new lm-eval process over one cache
                sent.clear()
                calls.clear()
                _as_in_a_new_process(include or [])
                with _local_rows(data_dir, cache), _recorded_samples(calls):
                    results = simple_evaluate(
                        model=Recorder(),
                        tasks=[name],
                        num_fewshot=num_fewshot,
                        task_manager=manager(include),
                        system_instruction=system,
                        apply_chat_template=chat is not None,
                        fewshot_as_multiturn=multiturn,
                        bootstrap_iters=0,
                        limit=limit,
                        confirm_run_unsafe_code=True,
                    )
    finally:
        logging.disable(logging.NOTSET)
    assert results is not None
    # the evaluator sends an instance `repeats` times: each once, where it was first sent
    unique = list({id(instance): instance for instance in sent}.values())
    by_task: dict[str, dict[int, list[Any]]] = {}
    for instance in unique:
        by_task.setdefault(str(instance.task_name), {}).setdefault(int(instance.doc_id), []).append(
            instance
        )
    found: dict[str, list[Doc]] = {}
    for task, by_doc in by_task.items():
        drawn_per_doc = calls.get(task, [])
        targets = {s["doc_id"]: s["target"] for s in (results.get("samples") or {})[task]}
        docs = []
        for order, (doc_id, group) in enumerate(by_doc.items()):
            group.sort(key=lambda instance: instance.idx)
            fewshot: list[int] = []
            if order < len(drawn_per_doc):
                sampler, drawn = drawn_per_doc[order]
                pool = list(sampler.df)
                fewshot = [next(i for i, d in enumerate(pool) if d is doc) for doc in drawn]
            requests = [(i.request_type, list(i.args), i.idx, i.repeats) for i in group]
            docs.append(Doc(doc_id, requests, targets[doc_id], fewshot))
        found[task] = docs
    return found


def reference(
    name: str | dict[str, Any], num_fewshot: int | None, data_dir: Path, **options: Any
) -> list[Doc]:
    """What lm-eval 0.4.13 sends for one task, doc by doc, in its order."""
    found = reference_tasks(name, num_fewshot, data_dir, **options)
    assert len(found) == 1, sorted(found)
    return next(iter(found.values()))
