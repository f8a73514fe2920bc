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
    """`datasets.load_dataset(path, name, split=...)` reads `<root>/<path>/<name>/<split>.jsonl`."""
    import datasets

    real = datasets.load_dataset

    def load(path: Any = None, name: Any = None, split: Any = None, **kwargs: Any) -> Any:
        folder = data_root / path / (name or "default")
        files = {split: str(folder / f"{split}.jsonl")}
        return real("json", data_files=files, split=split)

    datasets.load_dataset = load
    try:
        yield
    finally:
        datasets.load_dataset = real


def reference(task_function: Any, args: dict[str, Any], data_root: Path) -> list[dict[str, Any]]:
    """Each sample of Inspect's own run: its id, target, choices, and the (role, text) pairs
    of every model call, in order."""
    from inspect_ai import eval as inspect_eval

    with rows_from(data_root), tempfile.TemporaryDirectory() as logs:
        task = task_function(**args)
        (log,) = inspect_eval(task, model="mockllm/model", log_dir=logs, display="none")
        assert log.status == "success", log.error
        found = []
        for sample in log.samples or []:
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
