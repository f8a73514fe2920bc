"""A task built by lm-eval itself, its requests collected: the other half of the boundary with
lm-eval's own objects (`adapter` reads its index and plans its groups).

- a run is `lm_eval.simple_evaluate` itself, with a `TaskManager` over the index and a model
  that records nothing but stops the run at its first call, once every request is built: the
  seeds, the `num_fewshot` rule, the few-shot seed, `build_all_requests`, system instruction and
  chat template are lm-eval's own;
- only where the rows come from is replaced: `datasets.load_dataset`, as lm-eval's task module
  calls it, reads `<data root>/<dataset_path>/<dataset_name or default>/<split>.<ext>` through
  `datasets` itself when that folder exists, and the Hub (or its cache) otherwise;
- each build imports the task folders' modules afresh and reads its rows through a cache of its
  own (`Registry.render`), as a new lm-eval process does.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import DatasetError
from ..local_datasets import LocalDatasets
from .adapter import LmEvalError, installed_tasks_folder, quiet_lm_eval


@dataclass
class Request:
    """One request lm-eval would send: its type, its arguments, its index among the doc's."""

    request_type: str
    arguments: tuple[Any, ...]
    idx: int
    repeats: int


@dataclass
class BuiltDoc:
    """One evaluated doc: its position in lm-eval's order, its requests, target, examples."""

    doc_id: int
    requests: list[Request]
    target: Any
    fewshot_ids: list[Any]
    multiple_input: bool
    columns: dict[str, Any] | None = None
    """The doc's row as lm-eval holds it (after `process_docs`): what a port's key is read from."""


@dataclass
class BuiltTask:
    """One task's requests as lm-eval built them, and what a snapshot records of its config."""

    name: str
    docs: list[BuiltDoc]
    total: int
    config: dict[str, Any]
    pool_size: int | None
    eval_split: str | None
    fewshot_split: str | None
    version: Any = None
    """`metadata.version` (None when the config has none)."""
    data_files: list[str] = field(default_factory=list)
    """Local split files read (absolute paths)."""


@dataclass(frozen=True)
class BuildOptions:
    """How a run renders: shots, system instruction, chat template, limit, data root."""

    num_fewshot: int | None
    data_dir: Path | None
    system_instruction: str | None = None
    chat: Callable[[list[dict[str, Any]], bool], str] | None = None
    """Renders a chat history (`add_generation_prompt`); None: plain text."""
    fewshot_as_multiturn: bool = True
    limit: int | None = None


class _Stopped(Exception):
    """Raised by the recording model at its first call: every request is built by then."""


def build(index: dict[str, Any], spec: str | dict[str, Any], options: BuildOptions) -> BuiltTask:
    """One task built by `lm_eval.simple_evaluate` over `index`, its requests collected."""
    from lm_eval import simple_evaluate

    manager, factory = _task_manager(index)
    model = _recording_model(options.chat)
    read: list[str] = []
    output = io.StringIO()
    _forget_task_modules(index)
    with (
        _generators_kept(),
        _local_datasets(options.data_dir, read),
        _templates_compiled_once(),
        quiet_lm_eval(output),
    ):
        try:
            simple_evaluate(
                model=model,
                tasks=[spec],
                num_fewshot=options.num_fewshot,
                limit=options.limit,
                task_manager=manager,
                system_instruction=options.system_instruction,
                apply_chat_template=options.chat is not None,
                fewshot_as_multiturn=options.fewshot_as_multiturn,
                bootstrap_iters=0,
                confirm_run_unsafe_code=True,
                write_out=False,
            )
        except _Stopped:
            pass
        except DatasetError:
            raise
        except (KeyboardInterrupt, MemoryError):
            raise
        except BaseException as exc:  # a hook's SystemExit too: this task's error, not the run's
            raise _build_error(spec, exc, output.getvalue()) from exc
    tasks = factory.built
    if len(tasks) != 1:
        raise LmEvalError(f"lm-eval built {len(tasks)} tasks for {_spec_name(spec)!r}, not one")
    return _collected(tasks[0], factory.samples.get(id(tasks[0]), []), options, read)


def _forget_task_modules(index: dict[str, Any]) -> None:
    """Every module of a task folder (a folder holding one of the index's YAML files, or one
    below lm-eval's installed task folder: `!function` hooks and their helpers) forgotten, so
    this build imports them afresh, as a new lm-eval process does: a hook module's own state
    (a `random.Random(42)` at module level) starts where it starts in lm-eval's run, whatever
    was built before."""
    from ...engine.task_modules import forget_modules

    paths = {str(entry.yaml_path) for entry in index.values() if getattr(entry, "yaml_path", 0)}
    installed = installed_tasks_folder()
    inside = [str(folder) for folder in installed.iterdir() if folder.is_dir()] if installed else []
    forget_modules({os.path.dirname(path) for path in paths}, inside)


_TEMPLATES: dict[str, Any] = {}
"""Jinja templates lm-eval compiled, by source text (see `_templates_compiled_once`)."""
_TEMPLATES_KEPT = 4096


@contextlib.contextmanager
def _templates_compiled_once() -> Iterator[None]:
    """lm-eval compiles a task's Jinja templates (`doc_to_text`, `doc_to_target`,
    `doc_to_choice`, `description`) anew for every doc it formats (`utils.apply_template` calls
    `env.from_string`): most of a task's build. While a task is built, each source text is
    compiled by lm-eval's own environment once per process (kept across the run's tasks, at
    most `_TEMPLATES_KEPT` texts) and the same `Template` reused: a compiled template keeps no
    state between renders, so every text is what lm-eval renders."""
    import lm_eval.utils as utils

    env = utils.env
    compile_template = env.from_string
    saved = env.__dict__.get("from_string")

    def from_string(source: Any, globals: Any = None, template_class: Any = None) -> Any:
        if globals is not None or template_class is not None or not isinstance(source, str):
            return compile_template(source, globals, template_class)
        found = _TEMPLATES.get(source)
        if found is None or found.environment is not env:
            if len(_TEMPLATES) >= _TEMPLATES_KEPT:
                _TEMPLATES.clear()
            found = _TEMPLATES[source] = compile_template(source)
        return found

    env.from_string = from_string
    try:
        yield
    finally:
        if saved is None:
            del env.from_string
        else:
            env.from_string = saved


def _spec_name(spec: str | dict[str, Any]) -> str:
    return spec if isinstance(spec, str) else str(spec.get("task"))


def _build_error(spec: str | dict[str, Any], exc: BaseException, output: str) -> LmEvalError:
    """lm-eval's failure, with the last lines it printed or logged."""
    shown = output.strip()[-1500:]
    said = "".join(f"\n  | {line}" for line in shown.split("\n")) if shown else ""
    return LmEvalError(
        f"lm-eval could not build task {_spec_name(spec)!r}: {type(exc).__name__}: {exc}"
        + (f"\nlm-eval's output:{said}" if said else "")
    )


def _task_manager(index: dict[str, Any]) -> tuple[Any, Any]:
    """A `TaskManager` over `index` (lm-eval's own builds its index of every folder first),
    whose factory keeps the tasks it builds and wraps their few-shot samplers."""
    from lm_eval.tasks._factory import TaskFactory
    from lm_eval.tasks.manager import TaskManager

    class Recording(TaskFactory):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(meta=None)
            self.built: list[Any] = []
            self.samples: dict[int, list[list[Any]]] = {}

        def build(self, entry: Any, **kwargs: Any) -> Any:
            out = super().build(entry, **kwargs)
            for item in out if isinstance(out, list) else [out]:
                for task in item.get_all_tasks() if hasattr(item, "get_all_tasks") else [item]:
                    self.built.append(task)
                    self.samples[id(task)] = _record_samples(task)
            return out

    class Manager(TaskManager):  # type: ignore[misc]
        def __init__(self, index: dict[str, Any], factory: Any) -> None:
            self.include_path = None
            self.metadata = None
            self._factory = factory
            self._index = index

    factory = Recording()
    return Manager(dict(index), factory), factory


def _record_samples(task: Any) -> list[list[Any]]:
    """Each doc's few-shot examples as its sampler draws them (one list per context built)."""
    calls: list[list[Any]] = []
    sampler = getattr(task, "sampler", None)
    context = getattr(task, "fewshot_context", None)
    if sampler is None or context is None:
        return calls
    draw = sampler.sample

    def sample(*args: Any, **kwargs: Any) -> Any:
        drawn = draw(*args, **kwargs)
        if calls:
            calls[-1].extend(drawn)
        return drawn

    def fewshot_context(*args: Any, **kwargs: Any) -> Any:
        calls.append([])
        return context(*args, **kwargs)

    sampler.sample = sample
    task.fewshot_context = fewshot_context
    return calls


def _recording_model(chat: Callable[[list[dict[str, Any]], bool], str] | None) -> Any:
    """An lm-eval model that stops the run when it is first asked for anything."""
    from lm_eval.api.model import LM

    class Recorder(LM):  # type: ignore[misc]
        MULTIMODAL = True  # multimodal tasks are built too; their inputs are recorded by digest

        def loglikelihood(self, requests: Any) -> Any:
            raise _Stopped

        def loglikelihood_rolling(self, requests: Any) -> Any:
            raise _Stopped

        def generate_until(self, requests: Any) -> Any:
            raise _Stopped

        def apply_chat_template(
            self, chat_history: list[dict[str, Any]], add_generation_prompt: bool = True
        ) -> str:
            assert chat is not None
            return chat(chat_history, add_generation_prompt)

        @property
        def tokenizer_name(self) -> str:
            return "pytest-evaltasks"

        def chat_template(self, chat_template: Any = False) -> str:
            return "pytest-evaltasks"

    return Recorder()


def _collected(
    task: Any, samples: list[list[Any]], options: BuildOptions, read: list[str]
) -> BuiltTask:
    """The built task's requests, doc by doc, in lm-eval's order."""
    instances = list(task.instances or [])
    by_doc: dict[int, list[Any]] = {}
    for instance in instances:
        by_doc.setdefault(int(instance.doc_id), []).append(instance)
    pool = list(getattr(getattr(task, "sampler", None), "df", None) or [])
    positions = {id(doc): index for index, doc in enumerate(pool)}
    docs: list[BuiltDoc] = []
    multiple_input = bool(getattr(task, "multiple_input", 0))
    for order, (doc_id, group) in enumerate(by_doc.items()):
        group.sort(key=lambda instance: instance.idx)
        doc = group[0].doc
        drawn = samples[order] if order < len(samples) else []
        docs.append(
            BuiltDoc(
                doc_id=doc_id,
                requests=[
                    Request(
                        str(instance.request_type),
                        tuple(instance.arguments)
                        if isinstance(instance.arguments, (tuple, list))
                        else (instance.arguments,),
                        int(instance.idx),
                        int(instance.repeats or 1),
                    )
                    for instance in group
                ],
                columns=doc if isinstance(doc, dict) else None,  # held, not copied
                target=task.doc_to_target(doc),
                fewshot_ids=[_pool_id(example, pool, positions) for example in drawn],
                multiple_input=multiple_input,
            )
        )
    total = len(docs)
    if options.limit is not None and total >= options.limit:
        with contextlib.redirect_stderr(io.StringIO()), _generators_kept():
            total = len(task.eval_docs)
    config = task.config
    return BuiltTask(
        name=str(getattr(config, "task", "")),
        docs=docs,
        total=total,
        config=_config_fields(task),
        pool_size=len(pool) if getattr(task, "sampler", None) is not None else None,
        eval_split=config.test_split
        if task.has_test_docs()
        else config.validation_split
        if task.has_validation_docs()
        else None,
        fewshot_split=_fewshot_split(task),
        version=config.metadata.get("version") if isinstance(config.metadata, dict) else None,
        data_files=sorted(set(read)),
    )


def _pool_id(example: Any, pool: list[Any], positions: dict[int, int]) -> Any:
    """A few-shot example's position in its sampler's pool (by identity, else by equality)."""
    found = positions.get(id(example))
    if found is not None:
        return found
    for index, doc in enumerate(pool):
        if doc == example:
            return index
    return None


def _fewshot_split(task: Any) -> str | None:
    """Where the few-shot pool comes from, as lm-eval's `fewshot_docs` picks it."""
    fewshot = getattr(task, "fewshot_cfg", None)
    config = task.config
    if fewshot is not None and fewshot.split is not None:
        return str(fewshot.split)
    if fewshot is not None and config.fewshot_config is not None and fewshot.samples is not None:
        return "fewshot_config.samples"
    if task.has_training_docs():
        return str(config.training_split)
    if task.has_validation_docs():
        return str(config.validation_split)
    return str(config.test_split) if config.test_split is not None else None


CONFIG_FIELDS = (
    "dataset_path",
    "dataset_name",
    "dataset_kwargs",
    "custom_dataset",
    "test_split",
    "validation_split",
    "training_split",
    "fewshot_split",
    "output_type",
    "num_fewshot",
    "repeats",
    "generation_kwargs",
    "metric_list",
    "filter_list",
    "process_results",
    "use_prompt",
    "unsafe_code",
)
"""TaskConfig fields a snapshot's `[task]` records (when set): coordinates, shots and
scoring. What shapes the prompts (templates, delimiters, hooks) is in every request."""


def _config_fields(task: Any) -> dict[str, Any]:
    """The recorded config fields, as the built task holds them."""
    config = task.config
    fields: dict[str, Any] = {}
    for name in CONFIG_FIELDS:
        value = getattr(config, name, None)
        if value is None or (value is False and name == "unsafe_code"):
            continue
        fields[name] = value
    fewshot = getattr(task, "fewshot_cfg", None)
    if fewshot is not None:
        fields["sampler"] = fewshot.sampler
    metadata = config.metadata if isinstance(config.metadata, dict) else {}
    extra = {
        key: value
        for key, value in metadata.items()
        if key not in ("version", "config_source") and not key.startswith("evaltasks_")
    }
    if extra:
        fields["metadata"] = extra
    return fields


@contextlib.contextmanager
def _generators_kept() -> Iterator[None]:
    """lm-eval seeds `random`, numpy and torch as it starts a run; the caller gets its
    generators back as they were."""
    python_state = random.getstate()
    numpy = sys.modules.get("numpy")
    numpy_state = numpy.random.get_state() if numpy is not None else None
    torch = sys.modules.get("torch")
    torch_state = torch.random.get_rng_state() if torch is not None else None
    try:
        yield
    finally:
        random.setstate(python_state)
        if numpy is not None:
            numpy.random.set_state(numpy_state)
        if torch is not None:
            torch.random.set_rng_state(torch_state)


@contextlib.contextmanager
def _local_datasets(data_dir: Path | None, read: list[str]) -> Iterator[None]:
    """Rows from the data root while a task is built, through `datasets` as lm-eval reads them:
    Arrow-backed and cached, so a `process_docs` hook's `.map` runs once per build and is
    reused within it, as on the data a Hub download gives (its cache is the build's own:
    `private_caches`)."""
    import lm_eval.api.task as task_module

    saved = task_module.datasets
    task_module.datasets = LocalDatasets(saved, data_dir, read)
    try:
        yield
    finally:
        task_module.datasets = saved


def hook_files(config: Any, base: Path) -> set[str]:
    """The module files of a config's `!function` hooks, as the unresolved index records them
    (`/dir/utils.process_docs`: the file `/dir/utils.py`)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str) and os.path.isabs(value) and "." in os.path.basename(value):
            module = value.rsplit(".", 1)[0]
            candidate = f"{module}.py" if not module.endswith(".py") else module
            if os.path.isfile(candidate):
                found.add(os.path.abspath(candidate))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(config)
    return found


def dataset_of(config: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """A config's dataset coordinates: `dataset_path`, `dataset_name`, `dataset_kwargs`."""
    kwargs = config.get("dataset_kwargs")
    return config.get("dataset_path"), config.get("dataset_name"), dict(kwargs or {})


def load_for_slice(index: dict[str, Any], spec: str | dict[str, Any]) -> tuple[Any, list[str]]:
    """A task's dataset from `datasets` (the Hub or its cache), and the splits the task reads,
    for `--evaltasks-save-data`; lm-eval's own config and download."""
    from lm_eval.tasks._factory import TaskFactory

    with quiet_lm_eval():
        if isinstance(spec, str):
            config = TaskFactory(meta=None)._load_full_config(index[spec], None)
        else:
            config = dict(spec)
    if callable(config.get("custom_dataset")):
        raise LmEvalError(
            f"task {_spec_name(spec)!r} builds its dataset with a custom_dataset hook: there is "
            f"no dataset to slice; commit the files the hook reads instead"
        )
    path, name, kwargs = dataset_of(config)
    kwargs.pop("trust_remote_code", None)
    import datasets

    dataset = datasets.load_dataset(path=path, name=name, **kwargs)
    fewshot = config.get("fewshot_config") or {}
    splits = [
        config.get(key)
        for key in ("test_split", "validation_split", "training_split", "fewshot_split")
    ]
    splits.append(fewshot.get("split") if isinstance(fewshot, dict) else None)
    return dataset, [split for split in dict.fromkeys(splits) if isinstance(split, str)]


def plain_arguments(arguments: tuple[Any, ...]) -> list[Any]:
    """A request's arguments as plain data: contexts, continuations and generation arguments
    as they are; images and audio (multimodal tasks) by a digest of their bytes."""
    plain: list[Any] = []
    for argument in arguments:
        if isinstance(argument, dict) and ("visual" in argument or "audio" in argument):
            plain.append({key: _media(value) for key, value in sorted(argument.items())})
        else:
            plain.append(jsonable(argument))
    return plain


def _media(value: Any) -> Any:
    from ...engine.media import UnreadableMedia, media_digest

    if isinstance(value, list):
        return [_media(item) for item in value]
    try:
        return media_digest(value)
    except UnreadableMedia:
        return f"<{type(value).__name__}>"


def jsonable(value: Any) -> Any:
    """Tuples as lists, numpy values as Python values; the rest as it is."""
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if hasattr(value, "tolist") and hasattr(value, "dtype"):
        return value.tolist()
    return value


def messages_text(history: list[dict[str, Any]]) -> str:
    """A chat history as lm-eval's API chat models send it (`JsonChatStr`)."""
    return json.dumps(history, ensure_ascii=False)
