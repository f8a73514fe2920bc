"""`TaskConfig`: the declarative description of one task, with lighteval's field names.

Validated by pydantic v2's core (`pydantic_core`) against a schema written out here, so a run
pays about 50 ms for validation instead of the ~200 ms that importing pydantic and building a
model's schema cost: every run of the plugin imports the task modules, which build configs.
Unknown fields are refused with a did-you-mean hint; invalid values name the task, the field
and the value, for construction and assignment alike.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic_core import SchemaValidator, ValidationError
from pydantic_core import core_schema as cs

from ..errors import TaskConfigError, did_you_mean
from .metrics import metric_name

FEW_SHOT_SELECTIONS = (
    "balanced",
    "random",
    "sequential",
    "random_sampling_from_train",
    "random_sampling",
)

_PACKAGE_DIR = str(Path(__file__).resolve().parent)

REQUIRED = object()


def _str_list() -> cs.CoreSchema:
    return cs.list_schema(cs.str_schema())


def _strict_int() -> cs.CoreSchema:
    return cs.int_schema(strict=True)


FIELDS: dict[str, tuple[cs.CoreSchema, Any]] = {
    "name": (cs.str_schema(min_length=1), REQUIRED),
    "prompt_function": (cs.callable_schema(), REQUIRED),
    "hf_repo": (cs.str_schema(), REQUIRED),
    "hf_subset": (cs.nullable_schema(cs.str_schema()), REQUIRED),
    "metrics": (cs.list_schema(cs.any_schema()), REQUIRED),
    "solver": (cs.any_schema(), None),
    "scorer": (cs.any_schema(), None),
    "sample_fields": (cs.any_schema(), None),
    "sample_to_fewshot": (cs.any_schema(), None),
    "filter": (cs.any_schema(), None),
    "hf_revision": (cs.nullable_schema(cs.str_schema()), None),
    "hf_filter": (cs.nullable_schema(cs.callable_schema()), None),
    "hf_data_files": (
        cs.nullable_schema(
            cs.union_schema(
                [cs.str_schema(), _str_list(), cs.dict_schema(cs.str_schema(), cs.any_schema())]
            )
        ),
        None,
    ),
    "hf_avail_splits": (cs.nullable_schema(_str_list()), lambda: ["train", "validation", "test"]),
    "evaluation_splits": (cs.list_schema(cs.str_schema(), min_length=1), lambda: ["validation"]),
    "few_shots_split": (
        cs.nullable_schema(cs.union_schema([cs.str_schema(), _str_list()])),
        None,
    ),
    "few_shots_select": (cs.nullable_schema(cs.literal_schema(list(FEW_SHOT_SELECTIONS))), None),
    "generation_size": (cs.nullable_schema(_strict_int()), None),
    "generation_grammar": (cs.any_schema(), None),
    "stop_sequence": (cs.nullable_schema(_str_list()), None),
    "num_samples": (cs.nullable_schema(cs.list_schema(_strict_int())), None),
    "original_num_docs": (_strict_int(), -1),
    "effective_num_docs": (_strict_int(), -1),
    "must_remove_duplicate_docs": (cs.bool_schema(strict=True), False),
    "num_fewshots": (cs.int_schema(strict=True, ge=0), 0),
    "truncate_fewshots": (cs.bool_schema(strict=True), False),
    "version": (_strict_int(), 0),
}
"""Field -> (schema, default): lighteval's fields and defaults; `REQUIRED` has none."""

LIST_FIELDS = ("hf_avail_splits", "evaluation_splits", "stop_sequence")
"""Fields lighteval task files often give as tuples; a bare string there is a mistake."""


def _validator(names: Sequence[str]) -> SchemaValidator:
    """A validator for `names`: missing required fields are errors, the rest get defaults."""
    fields = {}
    for name in names:
        schema, default = FIELDS[name]
        if default is REQUIRED:
            fields[name] = cs.typed_dict_field(schema, required=True)
        elif callable(default):
            fields[name] = cs.typed_dict_field(
                cs.with_default_schema(schema, default_factory=default), required=False
            )
        else:
            fields[name] = cs.typed_dict_field(
                cs.with_default_schema(schema, default=default), required=False
            )
    return SchemaValidator(cs.typed_dict_schema(fields, extra_behavior="forbid"))


_ALL = _validator(list(FIELDS))
_KNOWN = frozenset(FIELDS)
_ONE: dict[str, SchemaValidator] = {}


FewShotSelection = Literal[
    "balanced", "random", "sequential", "random_sampling_from_train", "random_sampling"
]
"""`few_shots_select`'s values (`FEW_SHOT_SELECTIONS`), for type checkers."""


def _validated_init(self: TaskConfig, **data: Any) -> None:
    """`TaskConfig.__init__` at run time: validate, turning the report into one error that
    names the task."""
    _reject_unknown_fields(data)
    prepared, problems = _prepare(data)
    try:
        values = _ALL.validate_python(prepared)
    except ValidationError as exc:
        raise TaskConfigError(_describe(data.get("name"), problems + _errors(exc))) from None
    if problems:
        raise TaskConfigError(_describe(data.get("name"), problems))
    values["_source"] = _caller_location()
    self.__dict__.update(values)  # one call: a large suite makes tens of thousands


class TaskConfig:
    """One task: its dataset, prompt function, splits, few-shot and generation settings.

    Unknown fields are refused with a did-you-mean hint; invalid values name the task, the
    field and the value. The config remembers the file and line that created it, so pytest
    can point at the task's source.
    """

    model_fields: dict[str, Any] = dict.fromkeys(FIELDS)
    """The field names (pydantic's name for them, kept for code that reads it)."""

    name: str
    prompt_function: Callable[..., Any]
    hf_repo: str
    hf_subset: str | None
    metrics: list[Any]
    solver: Any
    scorer: Any
    sample_fields: Any
    sample_to_fewshot: Any
    filter: Any
    hf_revision: str | None
    hf_filter: Callable[..., Any] | None
    hf_data_files: str | list[str] | dict[str, Any] | None
    hf_avail_splits: list[str] | None
    evaluation_splits: list[str]
    few_shots_split: str | list[str] | None
    """A split name; lighteval also accepts a list of them (the pool is their concatenation)."""
    few_shots_select: str | None
    generation_size: int | None
    generation_grammar: Any
    stop_sequence: list[str] | None
    num_samples: list[int] | None
    original_num_docs: int
    effective_num_docs: int
    must_remove_duplicate_docs: bool
    num_fewshots: int
    truncate_fewshots: bool
    version: int | str
    _source: tuple[str, int]

    if TYPE_CHECKING:
        # What type checkers see: every field as a keyword, with its type and default (a
        # default shown as `...` is a list: `FIELDS` has it). At run time `__init__` is
        # `_validated_init`, which takes `**data` and validates as the module docstring says;
        # tests/test_typing.py checks that this signature and `FIELDS` agree.
        def __init__(
            self,
            *,
            name: str,
            prompt_function: Callable[..., Any],
            hf_repo: str,
            hf_subset: str | None,
            metrics: Sequence[Any],
            solver: Any = None,
            scorer: Any = None,
            sample_fields: Any = None,
            sample_to_fewshot: Any = None,
            filter: Any = None,
            hf_revision: str | None = None,
            hf_filter: Callable[..., Any] | None = None,
            hf_data_files: str | list[str] | tuple[str, ...] | Mapping[str, Any] | None = None,
            hf_avail_splits: list[str] | tuple[str, ...] | None = ...,
            evaluation_splits: list[str] | tuple[str, ...] = ...,
            few_shots_split: str | list[str] | tuple[str, ...] | None = None,
            few_shots_select: FewShotSelection | None = None,
            generation_size: int | None = None,
            generation_grammar: Any = None,
            stop_sequence: list[str] | tuple[str, ...] | None = None,
            num_samples: list[int] | tuple[int, ...] | None = None,
            original_num_docs: int = -1,
            effective_num_docs: int = -1,
            must_remove_duplicate_docs: bool = False,
            num_fewshots: int = 0,
            truncate_fewshots: bool = False,
            version: int = 0,
        ) -> None:
            """Validate, turning the report into one error that names the task."""

    else:
        __init__ = _validated_init

    def __setattr__(self, name: str, value: Any) -> None:
        """Keep assignment errors as readable as construction errors."""
        if name not in FIELDS:
            raise TaskConfigError(
                f"task {self.name!r}: unknown config field {name!r}{did_you_mean(name, FIELDS)}"
            )
        prepared, problems = _prepare({name: value})
        if problems:
            raise TaskConfigError(_describe(self.name, problems))
        validator = _ONE.get(name) or _ONE.setdefault(name, _validator([name]))
        try:
            values = validator.validate_python(prepared)
        except ValidationError as exc:
            raise TaskConfigError(_describe(self.name, _errors(exc))) from None
        object.__setattr__(self, name, values[name])

    @classmethod
    def model_validate(cls, data: dict[str, Any]) -> TaskConfig:
        """A config from a mapping of fields (pydantic's name for it)."""
        return cls(**data)

    def model_dump(self) -> dict[str, Any]:
        """The fields as a dict (pydantic's name for it)."""
        return {name: getattr(self, name) for name in FIELDS}

    def model_copy(self, update: dict[str, Any] | None = None) -> TaskConfig:
        """A shallow copy with some fields replaced (not validated, as in pydantic)."""
        copied = object.__new__(TaskConfig)
        copied.__dict__.update(self.__dict__)
        copied.__dict__.update(update or {})
        return copied

    @property
    def extra_fields(self) -> dict[str, Any]:
        """Fields of the config this was converted from that we do not know (a subclass's):
        recorded in the snapshot, since they may change what is sent or scored."""
        extra: dict[str, Any] = self.__dict__.get("_extra", {})
        return extra

    def set_extra_fields(self, fields: dict[str, Any]) -> None:
        """Keep the unknown fields of a converted config (see `extra_fields`)."""
        object.__setattr__(self, "_extra", dict(fields))

    def keep_upstream_version(self, version: int | str) -> None:
        """Give a config its harness's own version as the harness wrote it (lighteval's own
        task files write `version="0.1"`; lighteval does not check the type). Only the adapter
        of a harness-owned file calls this: a project's configs are validated as ints."""
        object.__setattr__(self, "version", version)

    def set_source(self, path: str, line: int) -> None:
        """Locate a config made elsewhere (a converted lighteval config) at its task file."""
        object.__setattr__(self, "_source", (path, line))

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

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TaskConfig):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in FIELDS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TaskConfig(name={self.name!r}, hf_repo={self.hf_repo!r}, version={self.version!r})"


LightevalTaskConfig = TaskConfig
"""The lighteval name, so ported task files only change their imports."""

Problem = tuple[str, Any, str]
"""(field, value, message) of one invalid value."""


def _prepare(data: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """lighteval's leniencies, before validation: tuples are lists, a one-element list of
    few-shot splits is that split, metrics may be any sequence; a bare string is a mistake.

    Runs for every config of a suite (tens of thousands in lighteval's), so values that are
    already lists cost one type check each.
    """
    prepared = dict(data)
    problems: list[Problem] = []
    for name in LIST_FIELDS:
        value = prepared.get(name)
        if value is None or type(value) is list:
            continue
        if isinstance(value, str):
            problems.append((name, value, "must be a list of strings, not a single string"))
            del prepared[name]
        elif isinstance(value, tuple):
            prepared[name] = list(value)
    split = prepared.get("few_shots_split")
    if split is not None and type(split) is not str:
        if isinstance(split, tuple):
            split = prepared["few_shots_split"] = list(split)
        if isinstance(split, list) and len(split) == 1:
            prepared["few_shots_split"] = split[0]
    version = prepared.get("version", 0)
    if type(version) is not int:
        problems.append(("version", version, _version_problem(version)))
        del prepared["version"]
    metrics = prepared.get("metrics", [])
    if type(metrics) is not list:
        if isinstance(metrics, (str, bytes)) or not isinstance(metrics, Sequence):
            problems.append(("metrics", metrics, "must be a list of metric objects"))
            del prepared["metrics"]
        else:
            prepared["metrics"] = list(metrics)
    return prepared, problems


def _reject_unknown_fields(data: dict[str, Any]) -> None:
    """Refuse unknown keys with a suggestion: a typo would otherwise silently do nothing."""
    if _KNOWN.issuperset(data):
        return
    unknown = [key for key in data if key not in FIELDS]
    task = data.get("name", "<unnamed>")
    details = "; ".join(f"{key!r}{did_you_mean(key, FIELDS)}" for key in unknown)
    raise TaskConfigError(f"task {task!r}: unknown config field {details}")


def _version_problem(value: Any) -> str:
    """Why a version that is not an int is refused, and the int to write instead: the gate
    orders versions, and `"1"`, `1.0` or `"v1"` would be a second spelling of one."""
    text = str(value).strip().lstrip("vV")
    try:
        number = float(text)
    except ValueError:
        number = None
    if isinstance(value, bool) or number is None or not number.is_integer():
        hint = "an int such as version=1"
    else:
        hint = f"version={int(number)}"
    return (
        f"must be an int (the task's version, raised by one with each change of its prompts), "
        f"not {type(value).__name__}: write {hint}"
    )


def _errors(exc: ValidationError) -> list[Problem]:
    """pydantic's errors as (field, value, message)."""
    problems: list[Problem] = []
    for error in exc.errors():
        location = ".".join(str(part) for part in error["loc"]) or "<config>"
        message = error["msg"]
        if error["type"] == "literal_error" and "few_shots_select" in location:
            value = error.get("input")
            hint = did_you_mean(value, FEW_SHOT_SELECTIONS) if isinstance(value, str) else ""
            message = f"must be one of {', '.join(FEW_SHOT_SELECTIONS)}, or None{hint}"
        problems.append((location, error.get("input"), message))
    return problems


def _describe(task: Any, problems: list[Problem]) -> str:
    """Task, field, value and what was expected: on the first line for one invalid field (the
    line a broken-module summary shows), one line each for several."""
    head = f"task {task if task else '<unnamed>'!r}: invalid config"
    details = [
        f"field {field!r} = {_short_repr(value)}: {message}" for field, value, message in problems
    ]
    if len(details) == 1:
        return f"{head}: {details[0]}"
    return "\n".join([f"{head} ({len(details)} fields):", *(f"  {line}" for line in details)])


def _short_repr(value: Any, limit: int = 80) -> str:
    """A repr that cannot flood the terminal."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _caller_location() -> tuple[str, int]:
    """The first stack frame outside this package: where the task file made the config."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR):
            return filename, frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return "<unknown>", 0
