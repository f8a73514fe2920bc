"""lighteval's own rendering of a task, for comparison (needs lighteval installed).

Runs a config the way a one-task lighteval 0.13 pipeline does: the global generators seeded
with 1234, `LightevalTask.get_docs`, then `PromptManager` for the plain prompt and the chat
messages. Rows come from a local data root, read by `datasets` as JSON Lines.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

Rendered = list[dict[str, Any]]


def lighteval_prompts(
    config: Any, data_dir: Path, shots: int, system_prompt: str | None = None
) -> tuple[str, Rendered]:
    """lighteval's `full_name` for the task, and every doc as it renders it."""
    import datasets
    import numpy
    from lighteval.tasks.lighteval_task import LightevalTask
    from lighteval.tasks.prompt_manager import PromptManager

    config = copy.deepcopy(config)
    config.num_fewshots = shots
    config.full_name = f"{config.name}|{shots}"
    random.seed(1234)
    numpy.random.seed(1234)
    task = LightevalTask(config)
    directory = data_dir / config.hf_repo / (config.hf_subset or "default")

    def load(_task: Any) -> Any:
        splits = {
            path.stem: datasets.load_dataset("json", data_files=str(path), split="train")
            for path in sorted(directory.glob("*.jsonl"))
        }
        loaded = datasets.DatasetDict(splits)
        return loaded.filter(config.hf_filter) if config.hf_filter else loaded

    task.download_dataset_worker = load  # type: ignore[method-assign]
    manager = PromptManager(use_chat_template=False, system_prompt=system_prompt)
    docs = [
        {
            "id": doc.id,
            "plain": manager.prepare_prompt(doc),
            "messages": manager.prepare_prompt_api(doc),
            "fewshot": [example.id for example in doc.fewshot_samples],
            "task_name": doc.task_name,
        }
        for doc in task.get_docs()
    ]
    return task.full_name, docs


def our_prompts(task: Any, system_prompt: str | None = None) -> tuple[str, Rendered]:
    """The same from a pytest_evaltasks `Task`."""
    from pytest_evaltasks import render_messages, render_plain

    docs = [
        {
            "id": doc.id,
            "plain": render_plain(doc, system_prompt),
            "messages": render_messages(doc, system_prompt),
            "fewshot": [example.id for example in doc.fewshot_samples],
            "task_name": doc.task_name,
        }
        for doc in task.get_docs()
    ]
    return task.full_name, docs
