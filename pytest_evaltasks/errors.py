"""Errors raised by the engine.

Every error a task author can cause derives from `EvalTaskError`, so the pytest plugin can
turn it into one readable message instead of a traceback through pytest internals.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class EvalTaskError(Exception):
    """Base class: a problem in a task, its data, a task string or an option."""


class TaskConfigError(EvalTaskError, ValueError):
    """A task config has an unknown field or an invalid value."""


class TaskStringError(EvalTaskError, ValueError):
    """A task string is malformed or names tasks that are not registered."""


class RegistryError(EvalTaskError):
    """Task discovery failed: name collisions, broken modules, bad custom task files."""


class DatasetError(EvalTaskError):
    """A dataset or split could not be found or read."""


class PromptFunctionError(EvalTaskError):
    """A prompt function raised or returned something that is not a `Doc`."""


class FewShotError(EvalTaskError, ValueError):
    """The few-shot pool cannot satisfy the requested selection."""


class UnrecordableValueError(EvalTaskError, TypeError):
    """A doc field or a config value has no canonical encoding, so no snapshot can hold it."""


class ChatTemplateError(EvalTaskError):
    """A chat template could not be loaded or rendered."""


def did_you_mean(word: str, candidates: Iterable[str], n: int = 1) -> str:
    """Return `' (did you mean X?)'` for the closest candidates, or `''` when none is close."""
    matches = difflib.get_close_matches(word, list(candidates), n=n, cutoff=0.6)
    if not matches:
        return ""
    return f" (did you mean {' or '.join(matches)}?)"
