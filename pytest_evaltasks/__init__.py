"""pytest-evaltasks: snapshot-test the prompts of LLM evaluation tasks.

Pipeline: task string → registry → docs → few-shot sampling → rendering → snapshot → items.
The engine imports neither pytest nor syrupy, so it is cheap to use from a script.
"""

from .config import LightevalTaskConfig, TaskConfig
from .doc import Doc, SamplingMethod
from .errors import EvalTaskError
from .fewshot import FewShotSampler
from .metrics import Metrics
from .registry import Registry
from .rendering import render_chat, render_messages, render_plain
from .task import Task
from .task_string import TaskRequest, parse_task_string

__all__ = [
    "Doc",
    "EvalTaskError",
    "FewShotSampler",
    "LightevalTaskConfig",
    "Metrics",
    "SamplingMethod",
    "Task",
    "TaskConfig",
    "TaskRequest",
    "Registry",
    "parse_task_string",
    "render_chat",
    "render_messages",
    "render_plain",
]
