"""Inspect AI's own objects, as the inspect source renders them: tasks built by their `@task`
functions, samples by their datasets' own loaders, prompts by their own solvers.

A task is what its `@task` function returns, called with the request's `@k=v` arguments. Its
dataset is read by Inspect's own loaders, from local copies in the data root where they are
(`sources/inspect/data.task_data`).

Each sample is then run through the task's solver chain as Inspect runs it, with one change:
the model is never called. `generate` records the messages it is given (the prompt as Inspect
would send it: templates, system messages, few-shot examples, the multiple-choice layout) and
answers with an empty completion. Solvers that need a model's answer to go on (a critique of
the answer, an agent loop) record what they sent up to that point.

This module imports Inspect only inside its functions: listing and indexing tasks never does.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import importlib
import importlib.util
import io
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from inspect import signature
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...engine.media import URL, Fetch, UnreadableMedia, digested_parts, media_digest
from ...errors import DatasetError, EvalTaskError
from .installed import PACKAGE, installed_package

if TYPE_CHECKING:
    from .data import Fetched


PREFIX = f"{PACKAGE}/"

MODEL = "mockllm/model"
"""The model a task is built and rendered with: Inspect's own mock model, active while the task
is built (a task function or solver that asks for the active model gets it, as under `inspect
eval --model mockllm/model`) and named in each sample's state. It is never called: `generate`
records what it is sent."""

SEED = 0
"""The seed of Python's and numpy's random generators while a task is built and rendered: a
task that shuffles its samples or choices without a seed is recorded under this one (the
caller's generators are restored after)."""


class InspectError(EvalTaskError):
    """An Inspect task that cannot be built: its function failed, or a solver did."""


@dataclass(frozen=True)
class InspectRef:
    """Where a task's `@task` function is: an importable module (inspect_evals') or a file."""

    name: str
    function: str
    module: str | None
    """The module to import (inspect_evals' own tasks); None: `path` is a user's file."""
    path: Path
    line: int = 1

    @property
    def owned(self) -> bool:
        """inspect_evals' own task, which its user does not edit (an upgrade may change it)."""
        return self.module is not None


def installed_tasks(package: Path) -> list[InspectRef]:
    """Every task inspect_evals registers, read from its `_registry.py` without importing it:
    each `from inspect_evals.<folder> import <task>` names one."""
    registry = package / "_registry.py"
    try:
        tree = ast.parse(registry.read_bytes(), str(registry))
    except (OSError, SyntaxError) as exc:
        raise InspectError(
            f"inspect_evals' task registry {registry} cannot be read: {exc}"
        ) from exc
    found: list[InspectRef] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PREFIX[:-1] + "."):
            folder = package.joinpath(*node.module.split(".")[1:])  # type: ignore[union-attr]
            for alias in node.names:
                found.append(
                    InspectRef(PREFIX + alias.name, alias.name, node.module, folder / "__init__.py")
                )
    return found


def task_functions(path: Path) -> list[tuple[str, str, int]]:
    """The `@task` functions of a user's file, read without importing it: (name, function,
    line), the name as Inspect gives it (`@task(name=...)`, else the function's)."""
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (OSError, SyntaxError, ValueError):
        return []
    found = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            target = call.func if call is not None else decorator
            named = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if named != "task":
                continue
            name = node.name
            for keyword in call.keywords if call is not None else []:
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    name = str(keyword.value.value)
            found.append((name, node.name, node.lineno))
    return found


def holds_task_files(directory: Path) -> bool:
    """The folder is inspect_evals' installed package, or has a top-level `*.py` that imports
    Inspect and defines a `@task`."""
    from ...engine.sources import top_module_holds

    installed = installed_package()
    if installed is not None and _same(directory, installed):
        return True
    return top_module_holds(directory, b"inspect_ai", b"@task")


def _same(left: Path, right: Path) -> bool:
    try:
        return left.resolve() == right.resolve()
    except OSError:
        return False


def eval_version(folder: Path) -> object:
    """The comparability version of an inspect_evals task folder's `eval.yaml` (`version:
    "2-A"` is 2, what its tasks set as `Task.version`), read without importing it; "?" when
    it has none."""
    try:
        text = (folder / "eval.yaml").read_text(encoding="utf-8")
    except OSError:
        return "?"
    found = re.search(r"^version:\s*[\"']?(\d+)-", text, re.MULTILINE)
    return int(found.group(1)) if found else "?"


def definition(ref: InspectRef) -> tuple[Path, int]:
    """The file and line of a task's `@task` function: a user's as indexed; inspect_evals'
    found in its folder's modules."""
    if not ref.owned:
        return ref.path, ref.line
    for path in sorted(ref.path.parent.glob("*.py")):
        for _, function, line in task_functions(path):
            if function == ref.function:
                return path, line
    return ref.path, 1


def versions() -> dict[str, str]:
    """The installed versions of inspect_ai and inspect_evals, as recorded in `[settings]`."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("inspect_ai", "inspect_evals"):
        try:
            found[package] = version(package.replace("_", "-"))
        except PackageNotFoundError:
            found[package] = "not installed"
    return found


@dataclass
class RenderedSample:
    """One sample as its dataset gives it, and what its solvers sent."""

    label: str
    sample: dict[str, Any]
    """The `Sample`'s fields as plain data (input, choices, target, id, metadata, ...)."""
    sent: list[list[dict[str, Any]]]
    """The messages of each `generate` call, in order (`role`, `content`, and a tool call's
    fields when set)."""


@dataclass
class InspectBuilt:
    """A task built by Inspect: its object (the header reads it) and its rendered samples."""

    task: Any
    samples: list[RenderedSample]
    total: int
    read: list[str] = field(default_factory=list)
    """The local data files its dataset was read from."""
    location: str | None = None
    """Where its dataset was read from, as records name it: a file a task downloaded by its URL
    and digest (its local path is a temporary one), else as the dataset says."""


def build(
    ref: InspectRef,
    module: Any,
    args: dict[str, Any],
    data_dir: Path | None,
    limit: int | None,
    fetched: Fetched | None = None,
) -> InspectBuilt:
    """The task built with `args` (its module imported by the caller; None: inspect_evals'
    own, imported here), and its first `limit` samples (all: None) rendered; its data from the
    data root (`sources/inspect/data.task_data`), or fetched into `fetched` to be saved there."""
    from .data import local_copy, private_evals_cache, task_data

    read: list[str] = []
    with _quiet(), _seeded(), private_evals_cache(), _mock_model():
        function = task_function(ref, module)
        with task_data(data_dir, read, fetched) as origin:
            built = _built(ref, function, args, limit, read, local_copy(data_dir))
            location = built.task.dataset.location
            built.location = (origin(location) if isinstance(location, str) else None) or location
            return built


def _built(
    ref: InspectRef,
    function: Any,
    args: dict[str, Any],
    limit: int | None,
    read: list[str],
    fetch: Fetch,
) -> InspectBuilt:
    """The task `function` returns for `args`, and its first `limit` samples rendered (media
    by the digest of their bytes, a URL's read with `fetch`)."""
    from inspect_ai import Task

    try:
        signature(function).bind(**args)
    except TypeError as exc:
        raise InspectError(f"task {ref.name!r}: its arguments do not fit: {exc}") from None
    except ValueError:
        pass  # no signature to check: the call says
    try:
        task = function(**args)
    except DatasetError:
        raise
    except Exception as exc:  # a task function's own failure, named
        raise InspectError(
            f"task {ref.name!r}: its @task function failed: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(task, Task):
        raise InspectError(
            f"task {ref.name!r}: its @task function returned a {type(task).__name__}, not "
            f"an Inspect Task"
        )
    samples = list(task.dataset)
    chosen = samples if limit is None else samples[:limit]
    # a user's task file runs in its own folder, as Inspect runs it: a relative media path is
    # read from there
    where = contextlib.nullcontext() if ref.owned else contextlib.chdir(ref.path.parent)
    with where:
        rendered = [
            _render(ref.name, task, sample, position, fetch)
            for position, sample in enumerate(chosen)
        ]
    return InspectBuilt(task, rendered, len(samples), read)


def task_function(ref: InspectRef, module: Any) -> Any:
    """The `@task` function of an imported module (inspect_evals' own imported here)."""
    if module is None:
        module = importlib.import_module(ref.module or "")
    function = getattr(module, ref.function, None)
    if function is None:
        raise InspectError(f"task {ref.name!r}: {ref.path} defines no {ref.function}()")
    return function


def _render(name: str, task: Any, sample: Any, position: int, fetch: Fetch) -> RenderedSample:
    """One sample through the task's solver chain, with a `generate` that records: what a model
    is sent, its images, audio and video by the digest of their bytes (`media`), as the
    sample's files."""
    from inspect_ai.model import ChatMessageUser, ModelName, ModelOutput
    from inspect_ai.scorer import Target
    from inspect_ai.solver import TaskState

    if isinstance(sample.input, str):
        messages = [ChatMessageUser(content=sample.input, source="input")]
    else:
        messages = [message.model_copy(deep=True) for message in sample.input]
    sample_id = sample.id if sample.id is not None else position + 1
    state = TaskState(
        model=ModelName(MODEL),
        sample_id=sample_id,
        epoch=1,
        input=sample.input,
        messages=messages,
        target=Target(sample.target),
        choices=sample.choices,
        metadata=dict(sample.metadata or {}),
    )
    sent: list[list[dict[str, Any]]] = []

    async def generate(state: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append([_message(message) for message in state.messages])
        state.output = ModelOutput.from_content(MODEL, "")
        state.messages.append(state.output.message)
        return state

    try:
        asyncio.run(task.solver(state, generate))
    except Exception as exc:
        if not sent:
            raise InspectError(
                f"task {name!r}: its solver failed on sample {sample_id!r} before sending "
                f"anything: {type(exc).__name__}: {exc}"
            ) from exc
    if not sent:  # a chain that never generates: what it would send
        sent.append([_message(message) for message in state.messages])
    try:
        fields = _digested_files(digested_parts(_sample_fields(sample), fetch), fetch)
        sent = digested_parts(sent, fetch)
    except UnreadableMedia as exc:
        raise InspectError(f"task {name!r}: sample {sample_id!r}: a media part {exc}") from exc
    return RenderedSample(str(sample_id), fields, sent)


def _digested_files(fields: dict[str, Any], fetch: Fetch) -> dict[str, Any]:
    """A sample's `files` (copied into its sandbox) by the digest of their bytes where they
    name them (a path to a file, a URL, a data URI); inline text as written."""
    files = fields.get("files")
    if not isinstance(files, dict):
        return fields
    digested = {
        name: media_digest(value, fetch)
        if isinstance(value, str) and (_names_bytes(value) or os.path.isfile(value))
        else value
        for name, value in files.items()
    }
    return {**fields, "files": digested}


def _names_bytes(value: str) -> bool:
    """A data URI or a URL: a sample file named, not given inline."""
    return value.startswith("data:") or URL.match(value) is not None


def _message(message: Any) -> dict[str, Any]:
    """A chat message as plain data: role and content (text, or its parts), and what else a
    model is sent with it (a tool call, a tool's result)."""
    content = message.content
    out: dict[str, Any] = {
        "role": message.role,
        "content": content if isinstance(content, str) else [plain(part) for part in content],
    }
    for key in ("tool_calls", "tool_call_id", "function"):
        value = getattr(message, key, None)
        if value:
            out[key] = plain(value)
    return out


def _sample_fields(sample: Any) -> dict[str, Any]:
    """A sample's fields as plain data, unset ones left out. Its input messages are without
    their `id`: Inspect gives each message made in a task's code a random one, which no model
    is sent."""
    data = sample.model_dump(mode="json", exclude_none=True)
    if isinstance(data.get("input"), list):
        data["input"] = [
            {key: value for key, value in message.items() if key != "id"}
            for message in data["input"]
        ]
    return {key: value for key, value in data.items() if value not in ({}, [])}


def plain(value: Any) -> Any:
    """A pydantic value (or a list of them) as JSON data."""
    if isinstance(value, list):
        return [plain(item) for item in value]
    dump = getattr(value, "model_dump", None)
    return dump(mode="json", exclude_none=True) if dump is not None else value


@contextlib.contextmanager
def _seeded() -> Iterator[None]:
    """Python's and numpy's global generators seeded with `SEED`, restored after."""
    import random

    import numpy

    saved, saved_numpy = random.getstate(), numpy.random.get_state()
    random.seed(SEED)
    numpy.random.seed(SEED)
    try:
        yield
    finally:
        random.setstate(saved)
        numpy.random.set_state(saved_numpy)


@contextlib.contextmanager
def _mock_model() -> Iterator[None]:
    """Inspect's mock model active (`MODEL`), as `inspect eval --model` makes a model, for a
    solver that calls the model itself (an agent loop)."""
    from inspect_ai.model import get_model
    from inspect_ai.model._model import active_model_context_var

    token = active_model_context_var.set(get_model(MODEL, custom_outputs=_mock_reply))
    try:
        yield
    finally:
        active_model_context_var.reset(token)


def _mock_reply(*args: Any) -> Any:
    """The mock model's own reply, with its token usage given: without it, the mock counts
    tokens with tiktoken, whose encoding it downloads (offline: half a minute's wait a call)."""
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.model._providers.mockllm import MockLLM

    output = ModelOutput.from_content("mockllm", MockLLM.default_output)
    output.usage = ModelUsage()
    return output


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Inspect's loaders print ("Loading dataset ... from Hugging Face") and `datasets` draws
    progress bars: neither belongs in a test run's output."""
    import datasets

    bars = datasets.utils.logging.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    out = sys.stdout
    sys.stdout = io.StringIO()
    try:
        yield
    finally:
        sys.stdout = out
        if bars:
            datasets.enable_progress_bars()
