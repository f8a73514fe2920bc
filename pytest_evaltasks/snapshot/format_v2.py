"""Format 2's facts, computed as format 2 computed them: kept to verify a format-2 file.

A file written in an older format is migrated only when its content can still be verified:
this run's build, recorded the way format 2 recorded it, must give the file's `[task]` fields
and doc hashes. Nothing here may change: it is what format-2 files hold. The current format is
built by `facts`, and differs where format 2 was wrong (machine-dependent metric names, mapping
keys as strings, image paths hashed as written, run-dependent counts in `[task]`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from enum import Enum
from typing import TYPE_CHECKING, Any

from ..engine.metrics import MetricRef, metric_category, metric_name
from .canonical import plain_value
from .fingerprint import DocHasher

if TYPE_CHECKING:
    from ..engine.run_settings import RunSettings
    from ..engine.task import Task, TaskResult

FORMAT = 2
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def hash_lines(docs: list[tuple[str, Any]]) -> dict[str, str]:
    """Doc hash by label, as format 2 hashed them."""
    hasher = DocHasher(legacy=True)
    return {label: hasher.digest(doc) for label, doc in docs}


def fingerprint(hash_text: str) -> str:
    """Format 2's `[fingerprint]`: one hash over the `[doc hashes]` lines alone."""
    return hashlib.sha256(hash_text.encode("utf-8")).hexdigest()


def settings(run: RunSettings) -> dict[str, str]:
    """Format 2's `[settings]`, which recorded `max_samples` too."""
    template = json.dumps(run.chat_template, ensure_ascii=False)
    if run.chat_template_digest is not None:
        template += f" (sha256:{run.chat_template_digest[:16]})"
    return {
        "system_prompt": json.dumps(run.system_prompt, ensure_ascii=False),
        "chat_template": template,
        "max_samples": "all" if run.max_samples is None else str(run.max_samples),
    }


def task_header(task: Task, result: TaskResult) -> dict[str, str]:
    """Format 2's `[task]` section."""
    config = task.config
    header: dict[str, str] = {
        "name": result.request.label,
        "version": _json(config.version),
        "dataset": f"{config.hf_repo} / {config.hf_subset or 'default'}"
        f" @ {config.hf_revision or 'default revision'}",
        "data_files": _json(config.hf_data_files),
        "evaluation_splits": ", ".join(config.evaluation_splits),
        "few_shots_split": task.fewshot_split or ", ".join(config.evaluation_splits),
    }
    if result.pool_from_eval:
        header["few_shots_warning"] = (
            "WARNING: no few-shot split, so examples come from the evaluation split itself"
            + (" (unused at 0 shots)" if result.pool_size is None else "")
        )
    pool = "not loaded (0-shot)" if result.pool_size is None else f"{result.pool_size} docs"
    if result.pool_size is not None and result.shortfall:
        pool += f"; {result.shortfall} docs got fewer than {result.request.num_fewshots} examples"
    header.update(
        {
            "few_shots_select": config.few_shots_select or "balanced",
            "num_fewshots": str(result.request.num_fewshots),
            "generation_size": _json(config.generation_size),
            "stop_sequences": _json(list(config.stop_sequence or [])),
            "num_samples": _json(config.num_samples),
            "metrics": ", ".join(_metric(metric) for metric in config.metrics) or "-",
            "metric_params": _json(dict(result.request.metric_params))
            if result.request.metric_params
            else "-",
            "docs": str(result.num_eval_docs),
            "fewshot_pool": pool,
        }
    )
    return header


def _metric(metric: Any) -> str:
    """Format 2's metric identity: by member and parameters, else type, name and a digest."""
    if isinstance(metric, Enum) and isinstance(metric.value, MetricRef):
        metric = metric.value
    if isinstance(metric, MetricRef):
        params = ", ".join(f"{key}={_param(value)}" for key, value in sorted(metric.params))
        names = metric.metric_name
        joined = ",".join(names) if isinstance(names, tuple) else str(names)
        suffix = f"; {metric.category.value}" if metric.category is not None else ""
        return f"{metric.name}{f'({params})' if params else ''} [{joined}{suffix}]"
    if isinstance(metric, str):
        return metric
    category = metric_category(metric)
    digest = hashlib.sha256(
        json.dumps(_describe(metric), sort_keys=True, ensure_ascii=False).encode("utf-8")
    ).hexdigest()[:12]
    label = f"{metric_name(metric)}{f'; {category}' if category else ''}"
    return f"{type(metric).__name__} [{label}] #{digest}"


def _param(value: Any) -> str:
    if callable(value):
        return str(getattr(value, "__qualname__", getattr(value, "__name__", type(value).__name__)))
    return str(value)


def _describe(value: Any, depth: int = 0) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Enum):
        return f"{type(value).__qualname__}.{value.name}"
    if depth > 4:
        return _ADDRESS.sub("", repr(value))[:200]
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_describe(item, depth + 1) for item in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, dict):
        return {str(key): _describe(item, depth + 1) for key, item in value.items()}
    if isinstance(value, functools.partial):
        return {
            "partial": _describe(value.func, depth + 1),
            "args": _describe(value.args, depth + 1),
            "keywords": _describe(value.keywords, depth + 1),
        }
    if isinstance(value, type) or (callable(value) and hasattr(value, "__qualname__")):
        return f"{getattr(value, '__module__', '?')}.{value.__qualname__}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    elif isinstance(getattr(value, "__dict__", None), dict):
        fields = {k: v for k, v in sorted(vars(value).items()) if not k.startswith("_")}
    else:
        return _ADDRESS.sub("", repr(value))[:200]
    described = {key: _describe(item, depth + 1) for key, item in fields.items()}
    return {"__class__": f"{type(value).__module__}.{type(value).__qualname__}", **described}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=_name_of)


def _name_of(value: Any) -> Any:
    try:
        return plain_value(value)
    except TypeError:
        return str(getattr(value, "__qualname__", None) or type(value).__name__)
