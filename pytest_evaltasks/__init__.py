"""pytest-evaltasks: snapshot-test the prompts of LLM evaluation tasks.

Pipeline: task string → registry → docs → few-shot sampling → rendering → snapshot → items.
The engine imports neither pytest nor syrupy, so it is cheap to use from a script.

The names below are imported on first access (PEP 562). pytest imports this package for every
session once the plugin is installed, and the config module alone costs about a quarter of a
second (pydantic), so a session that never asks for evaluation tasks should not pay for it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import LightevalTaskConfig, TaskConfig
    from .doc import Doc, SamplingMethod
    from .errors import EvalTaskError
    from .fewshot import FewShotSampler
    from .metrics import Metrics
    from .registry import Registry
    from .rendering import render_chat, render_messages, render_plain
    from .task import Task
    from .task_string import TaskRequest, parse_task_string

_EXPORTS: dict[str, str] = {
    "Doc": "doc",
    "EvalTaskError": "errors",
    "FewShotSampler": "fewshot",
    "LightevalTaskConfig": "config",
    "Metrics": "metrics",
    "Registry": "registry",
    "SamplingMethod": "doc",
    "Task": "task",
    "TaskConfig": "config",
    "TaskRequest": "task_string",
    "parse_task_string": "task_string",
    "render_chat": "rendering",
    "render_messages": "rendering",
    "render_plain": "rendering",
}
"""Public name -> the submodule that defines it."""

__all__ = [
    "Doc",
    "EvalTaskError",
    "FewShotSampler",
    "LightevalTaskConfig",
    "Metrics",
    "Registry",
    "SamplingMethod",
    "Task",
    "TaskConfig",
    "TaskRequest",
    "parse_task_string",
    "render_chat",
    "render_messages",
    "render_plain",
]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access and cache the name here."""
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module_name}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Public names included, although they are imported lazily."""
    return sorted({*globals(), *__all__})
