"""`TaskConfig`: the declarative description of one task, with lighteval's field names."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictInt,
    ValidationError,
    field_validator,
)

from ..errors import TaskConfigError, did_you_mean
from .metrics import metric_name

FewShotSelect = Literal[
    "balanced", "random", "sequential", "random_sampling_from_train", "random_sampling"
]

_PACKAGE_DIR = str(Path(__file__).resolve().parent)
_PYDANTIC_DIR = str(Path(pydantic.__file__).resolve().parent)


class TaskConfig(BaseModel):
    """One task: its dataset, prompt function, splits, few-shot and generation settings.

    Unknown fields are refused with a did-you-mean hint; invalid values name the task, the
    field and the value. The config remembers the file and line that created it, so pytest
    can point at the task's source.
    """

    model_config = ConfigDict(
        extra="forbid",
        arbitrary_types_allowed=True,
        validate_assignment=True,
        frozen=False,
    )

    name: str = Field(min_length=1)
    prompt_function: Callable[..., Any]
    hf_repo: str
    hf_subset: str | None  # None: the dataset's default configuration, as in `datasets`
    metrics: list[Any]

    solver: Any = None
    scorer: Any = None
    sample_fields: Any = None
    sample_to_fewshot: Any = None
    filter: Any = None

    hf_revision: str | None = None
    hf_filter: Callable[..., Any] | None = None
    hf_data_files: str | list[str] | dict[str, Any] | None = None
    hf_avail_splits: list[str] | None = Field(
        default_factory=lambda: ["train", "validation", "test"]
    )

    evaluation_splits: list[str] = Field(default_factory=lambda: ["validation"], min_length=1)
    few_shots_split: str | list[str] | None = None
    """A split name; lighteval also accepts a list of them (the pool is their concatenation)."""
    few_shots_select: FewShotSelect | None = None

    generation_size: StrictInt | None = None
    generation_grammar: Any = None
    stop_sequence: list[str] | None = None
    num_samples: list[StrictInt] | None = None

    original_num_docs: StrictInt = -1
    effective_num_docs: StrictInt = -1
    must_remove_duplicate_docs: StrictBool = False
    num_fewshots: StrictInt = Field(default=0, ge=0)
    truncate_fewshots: StrictBool = False
    version: StrictInt | Annotated[str, Field(min_length=1)] = 0

    _source: tuple[str, int] = PrivateAttr(default=("<unknown>", 0))

    def __init__(self, **data: Any) -> None:
        """Validate, turning pydantic's report into one error that names the task."""
        _reject_unknown_fields(data)
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise TaskConfigError(_describe(data.get("name"), exc)) from None
        self._source = _caller_location()

    def __setattr__(self, name: str, value: Any) -> None:
        """Keep assignment errors as readable as construction errors."""
        try:
            super().__setattr__(name, value)
        except ValidationError as exc:
            raise TaskConfigError(_describe(self.name, exc)) from None

    @field_validator("few_shots_split", mode="before")
    @classmethod
    def _fewshot_split_list(cls, value: Any) -> Any:
        """A one-element list (as lighteval task files write it) is that split."""
        if isinstance(value, tuple):
            value = list(value)
        if isinstance(value, list) and len(value) == 1:
            return value[0]
        return value

    @field_validator("hf_avail_splits", "evaluation_splits", "stop_sequence", mode="before")
    @classmethod
    def _tuple_to_list(cls, value: Any) -> Any:
        """lighteval task files often pass tuples; a bare string is a mistake, not a list."""
        if isinstance(value, str):
            raise ValueError("must be a list of strings, not a single string")
        return list(value) if isinstance(value, tuple) else value

    @field_validator("metrics", mode="before")
    @classmethod
    def _metrics_to_list(cls, value: Any) -> Any:
        """Accept any sequence of metric objects, as lighteval does."""
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise ValueError("must be a list of metric objects")
        return list(value)

    def set_source(self, path: str, line: int) -> None:
        """Locate a config made elsewhere (a converted lighteval config) at its task file."""
        self._source = (path, line)

    @property
    def source_file(self) -> str:
        """The file whose code created this config."""
        return self._source[0]

    @property
    def source_line(self) -> int:
        """The line in `source_file` that created this config."""
        return self._source[1]

    @property
    def metric_names(self) -> list[str]:
        """The recorded name of every metric, in order."""
        return [metric_name(metric) for metric in self.metrics]


LightevalTaskConfig = TaskConfig
"""The lighteval name, so ported task files only change their imports."""


def _reject_unknown_fields(data: dict[str, Any]) -> None:
    """Refuse unknown keys with a suggestion: a typo would otherwise silently do nothing."""
    known = TaskConfig.model_fields.keys()
    unknown = [key for key in data if key not in known]
    if not unknown:
        return
    task = data.get("name", "<unnamed>")
    details = "; ".join(f"{key!r}{did_you_mean(key, known)}" for key in unknown)
    raise TaskConfigError(f"task {task!r}: unknown config field {details}")


def _describe(task: Any, exc: ValidationError) -> str:
    """One line per invalid field: task, field, value, and what was expected."""
    lines = [f"task {task if task else '<unnamed>'!r}: invalid config"]
    for error in exc.errors():
        field_path = ".".join(str(part) for part in error["loc"]) or "<config>"
        value = error.get("input")
        lines.append(f"  field {field_path!r} = {_short_repr(value)}: {error['msg']}")
    return "\n".join(lines)


def _short_repr(value: Any, limit: int = 80) -> str:
    """A repr that cannot flood the terminal."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _caller_location() -> tuple[str, int]:
    """The first stack frame outside this package and pydantic: where the task file made us."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith((_PACKAGE_DIR, _PYDANTIC_DIR)):
            return filename, frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return "<unknown>", 0
