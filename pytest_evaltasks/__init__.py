"""pytest-evaltasks: snapshot-test the prompts of LLM evaluation tasks.

Pipeline: task string → registry → docs → few-shot sampling → rendering → snapshot → items.
The engine imports neither pytest nor syrupy, so it is cheap to use from a script.

The names below are imported on first access (PEP 562). pytest imports this package for every
session once the plugin is installed, and the engine's modules cost about a tenth of a second
(`pydantic_core` among them), so a session that never asks for evaluation tasks should not pay
for them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engine.config import LightevalTaskConfig, TaskConfig
    from .engine.doc import Doc, SamplingMethod
    from .engine.fewshot import FewShotSampler
    from .engine.metrics import Metrics
    from .engine.prompts import render_chat, render_messages, render_plain
    from .engine.registry import Registry
    from .engine.task import Task
    from .engine.task_string import TaskRequest, parse_task_string
    from .errors import EvalTaskError

__version__ = "0.2.0"

_EXPORTS: dict[str, str] = {
    "Doc": "engine.doc",
    "EvalTaskError": "errors",
    "FewShotSampler": "engine.fewshot",
    "LightevalTaskConfig": "engine.config",
    "Metrics": "engine.metrics",
    "Registry": "engine.registry",
    "SamplingMethod": "engine.doc",
    "Task": "engine.task",
    "TaskConfig": "engine.config",
    "TaskRequest": "engine.task_string",
    "parse_task_string": "engine.task_string",
    "render_chat": "engine.prompts",
    "render_messages": "engine.prompts",
    "render_plain": "engine.prompts",
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
    "__version__",
    "parse_task_string",
    "render_chat",
    "render_messages",
    "render_plain",
]


if not TYPE_CHECKING:  # type checkers see the imports above: a misspelt name is an error

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
