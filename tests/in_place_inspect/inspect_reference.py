"""What Inspect itself sends a model for each sample of a task: its own eval loop
(`inspect_ai.eval`) with its mock model, the rows read by `datasets` from the same files the
plugin reads. The messages of each model call come from the eval log's model events, in
Inspect's own types, turned into (role, text) pairs by Inspect's own `.text`.

Independent of the plugin: nothing here imports `pytest_evaltasks`."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def rows_from(data_root: Path) -> Iterator[None]:
    """`datasets.load_dataset(path, name, split=...)` reads `<root>/<path>/<name>/<split>.jsonl`
    (a repository folder, `data_dir="main"`, standing for the name)."""
    import datasets

    real = datasets.load_dataset

    def load(path: Any = None, name: Any = None, split: Any = None, **kwargs: Any) -> Any:
        folder = data_root / path / (name or kwargs.get("data_dir") or "default")
        files = {split: str(folder / f"{split}.jsonl")}
        return real("json", data_files=files, split=split)

    datasets.load_dataset = load
    try:
        yield
    finally:
        datasets.load_dataset = real


@contextlib.contextmanager
def counted_offline() -> Iterator[None]:
    """The mock model counts tokens with tiktoken, whose encoding is a download: a count by
    length instead (it only feeds the log's usage figures)."""
    import inspect_ai.model._model as model_module

    real = model_module.count_text_tokens
    model_module.count_text_tokens = lambda text: max(1, len(text) // 4)
    try:
        yield
    finally:
        model_module.count_text_tokens = real


def reference(task_function: Any, args: dict[str, Any], data_root: Path) -> list[dict[str, Any]]:
    """Each sample of Inspect's own run: its id, target, choices, and the (role, text) pairs
    of every model call, in order (long texts, which the log keeps as attachments, resolved)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import resolve_sample_attachments

    with rows_from(data_root), counted_offline(), tempfile.TemporaryDirectory() as logs:
        task = task_function(**args)
        (log,) = inspect_eval(task, model="mockllm/model", log_dir=logs, display="none")
        assert log.status == "success", log.error
        found = []
        for logged in log.samples or []:
            sample = resolve_sample_attachments(logged)
            calls = [
                [(message.role, message.text) for message in event.input]
                for event in sample.events
                if event.event == "model"
            ]
            found.append(
                {
                    "id": sample.id,
                    "target": sample.target,
                    "choices": sample.choices,
                    "calls": calls,
                }
            )
    return found
