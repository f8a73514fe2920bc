"""Errors raised by the engine.

Every error a task author can cause derives from `EvalTaskError`, so the pytest plugin can
turn it into one readable message instead of a traceback through pytest internals.
"""

from __future__ import annotations

import difflib
import re
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
    """Return `' (did you mean X?)'` for the closest candidates, or `''` when none is close.

    Besides names spelt alike, a task name is matched to names of the same family: the same
    first and last word (`mgsm_native_cot:bn` -> `mgsm:bn`, `mgsm_bn`), since suites rename
    the middle of names between releases.
    """
    pool = list(candidates)
    matches = difflib.get_close_matches(word, pool, n=n, cutoff=0.6)
    if n > 1:
        family = _words(word)
        if len(family) > 1:
            kin = sorted(
                name
                for name in pool
                if name not in matches
                and (words := _words(name))
                and len(words) > 1
                and words[0] == family[0]
                and words[-1] == family[-1]
            )
            matches += kin[: max(0, n - len(matches))]
    if not matches:
        return ""
    return f" (did you mean {' or '.join(matches)}?)"


def _words(name: str) -> list[str]:
    """A name's words, split at `:`, `_`, `-`, `.` and spaces."""
    return [part for part in re.split(r"[:_\-.\s]+", name.lower()) if part]
