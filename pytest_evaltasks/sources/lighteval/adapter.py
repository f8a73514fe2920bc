"""The boundary with lighteval's own objects: converted field by field into ours, duck-typed.

Task files written for lighteval hold its `LightevalTaskConfig` (or a subclass), return its
`Doc` and name its `Metrics`. Everything downstream of this module sees only our objects.
Nothing here imports lighteval: objects are recognised by their fields, and lighteval's
`Metrics` enum is looked up among the modules already imported (a lighteval task file has
imported it), so this module costs nothing when lighteval is absent.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...engine.doc import SamplingMethod
from ...engine.metrics import MetricRef

if TYPE_CHECKING:
    from ...engine.config import TaskConfig

CONFIG_MARKERS = ("name", "prompt_function", "hf_repo", "hf_subset", "metrics")
LIGHTEVAL_METRICS = "lighteval.metrics.metrics"


def is_task_config_like(value: Any) -> bool:
    """Has the fields of a task config (lighteval's `LightevalTaskConfig` or a subclass)."""
    return all(hasattr(value, name) for name in CONFIG_MARKERS)


def convert_config(raw: Any, origin: Path) -> TaskConfig:
    """Our `TaskConfig` with the values of a lighteval-style config, as lighteval left them
    after its `__post_init__` (tuples, filled-in defaults); fields we do not know (a subclass's)
    are kept as `extra_fields`, which the snapshot records.

    The config is located at the line of `origin` that names it, when one does.
    """
    from ...engine.config import TaskConfig

    fields = {name: getattr(raw, name) for name in TaskConfig.model_fields if hasattr(raw, name)}
    fields["metrics"] = [convert_metric(metric) for metric in fields.get("metrics") or ()]
    version = fields.get("version", 0)
    upstream = type(version) is not int and _lighteval_owns(origin)
    if upstream:
        fields["version"] = 0
    config = TaskConfig(**fields)
    if upstream:
        config.keep_upstream_version(version)
    config.set_source(str(origin), line_naming(origin, str(raw.name)))
    extra = {
        name: getattr(raw, name)
        for name in _field_names(raw)
        if name not in TaskConfig.model_fields and not name.startswith("_")
    }
    if extra:
        config.set_extra_fields(extra)
    return config


def _lighteval_owns(origin: Path) -> bool:
    """Whether `origin` is a file of the installed lighteval package (its own task folders),
    whose configs keep the versions lighteval wrote; a project's file is checked as ours."""
    module = sys.modules.get("lighteval")
    where = getattr(module, "__file__", None)
    if where is None:
        return False
    return Path(origin).resolve().is_relative_to(Path(where).resolve().parent)


def _field_names(raw: Any) -> list[str]:
    """The fields of a config object: a dataclass's (lighteval's config is one), else its
    instance attributes."""
    if dataclasses.is_dataclass(raw):
        return [field.name for field in dataclasses.fields(raw)]
    return list(getattr(raw, "__dict__", {}))


def convert_metric(metric: Any) -> Any:
    """A lighteval metric as our `MetricRef` when it is (a parametrised copy of) a member of
    lighteval's `Metrics` enum; anything else unchanged (it is identified by its structure)."""
    if isinstance(metric, MetricRef) or (
        isinstance(metric, Enum) and isinstance(metric.value, MetricRef)
    ):
        return metric
    value = metric.value if isinstance(metric, Enum) else metric
    if not hasattr(value, "metric_name") or not hasattr(value, "sample_level_fn"):
        return metric
    member, params = _member_of(value)
    if member is None:
        return metric
    names = value.metric_name
    return MetricRef(
        name=member,
        metric_name=tuple(names) if isinstance(names, (list, tuple)) else str(names),
        category=_category(value),
        params=params,
        num_samples=_num_samples(value),
    )


def _member_of(value: Any) -> tuple[str | None, tuple[tuple[str, Any], ...]]:
    """The lighteval `Metrics` member `value` is, or was copied from, and the parameters set
    on the copy (lighteval parametrises a deep copy by setting attributes of its scorer)."""
    members = _lighteval_members()
    name = members.get(id(value))
    if name is not None:
        return name, ()
    for candidate, original in _lighteval_values():
        if (
            type(original) is type(value)
            and type(original.sample_level_fn) is type(value.sample_level_fn)
            and _stem(original.metric_name) == _stem(value.metric_name)
            and type(original.corpus_level_fn) is type(value.corpus_level_fn)
        ):
            params = _changed(vars(original.sample_level_fn), vars(value.sample_level_fn))
            if params is not None:
                return candidate, params
    return None, ()


def _stem(names: Any) -> Any:
    """A metric name without lighteval's `:k=v` parameter suffix."""
    if isinstance(names, (list, tuple)):
        return tuple(str(name).split(":")[0] for name in names)
    return str(names).split(":")[0]


def _changed(before: dict[str, Any], after: dict[str, Any]) -> tuple[tuple[str, Any], ...] | None:
    """Attributes whose value differs (None when the objects are not comparable)."""
    if before.keys() != after.keys():
        return None
    changed: list[tuple[str, Any]] = []
    for key, value in after.items():
        if _same(before[key], value):
            continue
        if not isinstance(value, (str, int, float, bool, type(None))):
            return None  # not a simple parameter: a different metric altogether
        changed.append((key, value))
    return tuple(changed)


def _same(left: Any, right: Any) -> bool:
    """Equal, with a copied object's bound methods equal to the original's."""
    if callable(left) and callable(right):
        return getattr(left, "__func__", left) is getattr(right, "__func__", right)
    try:
        return bool(left == right)
    except Exception:
        return False


def _lighteval_values() -> list[tuple[str, Any]]:
    """(member name, metric object) of lighteval's `Metrics`, if lighteval is imported."""
    module = sys.modules.get(LIGHTEVAL_METRICS)
    enum = getattr(module, "Metrics", None)
    if enum is None:
        return []
    return [(member.name, member.value) for member in enum]


def _lighteval_members() -> dict[int, str]:
    """Member name by the id of its metric object (the objects lighteval's configs hold)."""
    return _members_by_id(id(sys.modules.get(LIGHTEVAL_METRICS)))


@functools.lru_cache(maxsize=4)
def _members_by_id(_module_id: int) -> dict[int, str]:
    """Cached per imported `lighteval.metrics.metrics` module."""
    return {id(value): name for name, value in _lighteval_values()}


def _category(value: Any) -> SamplingMethod | None:
    """The metric's sampling method as ours."""
    category = getattr(value, "category", None)
    text = str(getattr(category, "value", category))
    return SamplingMethod(text) if text in SamplingMethod.__members__ else None


def _num_samples(value: Any) -> int | None:
    """Samples per doc a sampling metric asks for (lighteval's `SamplingMetric`)."""
    scorer = value.sample_level_fn
    if any(cls.__name__ == "SamplingMetric" for cls in type(scorer).__mro__):
        try:
            return int(scorer.num_samples())
        except Exception:
            return None
    return None


def line_naming(origin: Path, name: str) -> int:
    """The first line of `origin` holding `name` as a string literal, else 1."""
    return _literal_lines(origin).get(name, 1)


_LITERAL = re.compile(r"""(["'])((?:(?!\1)[^\\\n])*)\1""")


@functools.lru_cache(maxsize=64)
def _literal_lines(origin: Path) -> dict[str, int]:
    """Every one-line string literal of a task file, with the line it first appears on; one
    pass per file, however many tasks it defines."""
    try:
        text = origin.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        for match in _LITERAL.finditer(line):
            lines.setdefault(match.group(2), number)
    return lines
