"""Metrics as a task names them: a stand-in for lighteval's `Metrics` enum, and their identity.

The harness never computes metrics. It records, for the version gate, which metric a task is
scored with: by full identity (member name, parameters, recorded names, sampling method), not by
display name, since `f1_score_macro` and `f1_score_micro` share the display name `f1`. Each
stand-in member carries lighteval's `metric_name` and category, so a task records the same
identity whether it uses this stand-in or lighteval's own enum (see `lighteval_adapter`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from .doc import SamplingMethod

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


@dataclass(frozen=True)
class MetricRef:
    """A metric named by a task: enough to record and identify it, nothing to compute."""

    name: str
    metric_name: str | tuple[str, ...]
    category: SamplingMethod | None = None
    params: tuple[tuple[str, Any], ...] = ()
    num_samples: int | None = None
    """Samples per doc the metric needs, when it is a sampling metric (lighteval's)."""

    def __call__(self, sample_params: dict[str, Any] | None = None) -> MetricRef:
        """Parametrise like lighteval does: parameters become part of the metric name."""
        if not sample_params:
            return self
        suffix = "&".join(f"{key}={_param_text(value)}" for key, value in sample_params.items())
        params = (*self.params, *sample_params.items())
        if isinstance(self.metric_name, tuple):
            names: str | tuple[str, ...] = tuple(f"{m}:{suffix}" for m in self.metric_name)
        else:
            names = f"{self.metric_name}:{suffix}"
        return replace(self, metric_name=names, params=params)

    @property
    def identity(self) -> str:
        """`name(k=v) [recorded names; CATEGORY]`: what the snapshot records."""
        params = ", ".join(f"{key}={_param_text(value)}" for key, value in sorted(self.params))
        names = (
            ",".join(self.metric_name) if isinstance(self.metric_name, tuple) else self.metric_name
        )
        category = f"; {self.category.value}" if self.category is not None else ""
        return f"{self.name}{f'({params})' if params else ''} [{names}{category}]"


def _param_text(value: Any) -> str:
    """Name callables by qualified name: a repr with a memory address would change every run."""
    if callable(value):
        return str(getattr(value, "__qualname__", getattr(value, "__name__", type(value).__name__)))
    return str(value)


_G, _L, _P = SamplingMethod.GENERATIVE, SamplingMethod.LOGPROBS, SamplingMethod.PERPLEXITY

_METRICS: dict[str, tuple[str | tuple[str, ...], SamplingMethod]] = {
    "acc_golds_likelihood": ("acc", _L),
    "avg_at_n": ("avg@n", _G),
    "avg_at_n_math": ("avg@n", _G),
    "bert_score": (("BERTScore-P", "BERTScore-R", "BERTScore-F"), _G),
    "bits_per_byte": ("bits_per_byte", _P),
    "bleu": ("bleu", _G),
    "bleu_1": ("bleu_1", _G),
    "bleu_4": ("bleu_4", _G),
    "bleurt": ("bleurt", _G),
    "byte_perplexity": ("byte_perplexity", _P),
    "chrf": ("chrf", _G),
    "chrf_plus": ("chrf++", _G),
    "copyright": (("longest_common_prefix_length", "edit_distance", "edit_similarity"), _G),
    "drop": (("em", "f1"), _G),
    "exact_match": ("em", _G),
    "expr_gold_metric": ("extractive_match", _G),
    "extractiveness": (
        ("summarization_coverage", "summarization_density", "summarization_compression"),
        _G,
    ),
    "extractiveness_de": (
        ("summarization_coverage", "summarization_density", "summarization_compression"),
        _G,
    ),
    "extractiveness_fr": (
        ("summarization_coverage", "summarization_density", "summarization_compression"),
        _G,
    ),
    "extractiveness_it": (
        ("summarization_coverage", "summarization_density", "summarization_compression"),
        _G,
    ),
    "f1_score": ("f1", _G),
    "f1_score_macro": ("f1", _G),
    "f1_score_micro": ("f1", _G),
    "faithfulness": ("summac", _G),
    "g_pass_at_k": ("g-pass@k", _G),
    "g_pass_at_k_math": ("math-g-pass@k", _G),
    "g_pass_at_k_latex": ("latex-g-pass@k", _G),
    "loglikelihood_acc": ("acc", _L),
    "loglikelihood_f1": ("loglikelihood_f1", _L),
    "maj_at_n": ("maj@n", _G),
    "mcc": ("mcc", _L),
    "mrr": ("mrr", _L),
    "multi_f1_numeric": ("mf1", _L),
    "pass_at_k": ("pass@k", _G),
    "pass_at_k_math": ("pass@k", _G),
    "pass_at_k_letters": ("pass@k", _G),
    "prediction_perplexity": ("ppl", _P),
    "recall_at_k": ("recall", _L),
    "rouge_t5": (("rouge1", "rouge2", "rougeL", "rougeLsum"), _G),
    "rouge1": ("rouge1", _G),
    "rouge2": ("rouge2", _G),
    "rougeL": ("rougeL", _G),
    "rougeLsum": ("rougeLsum", _G),
    "simpleqa_judge": (("simpleqa_judge",), _G),
    "target_perplexity": ("ppl", _L),
    "ter": ("ter", _G),
    "truthfulqa_mc_metrics": (("truthfulqa_mc1", "truthfulqa_mc2"), _L),
    "word_perplexity": ("word_perplexity", _P),
    "gpqa_instruct_metric": ("extractive_match", _G),
    "gpqa_instruct_pass_at_k": ("gpqa_pass@k", _G),
    # Not members of lighteval 0.13's enum (its ifeval task defines its own metric object),
    # kept so that tasks ported from older lighteval releases still import.
    "ifeval_metric": (
        (
            "prompt_level_strict_acc",
            "inst_level_strict_acc",
            "prompt_level_loose_acc",
            "inst_level_loose_acc",
        ),
        _G,
    ),
    "quasi_exact_match": ("qem", _G),
}
"""Member name -> (lighteval's `metric_name`, the sampling method the metric needs)."""

Metrics = Enum(  # type: ignore[misc]
    "Metrics",
    {name: MetricRef(name, names, category) for name, (names, category) in _METRICS.items()},
    module=__name__,
)
"""`Metrics.exact_match` and friends; a call parametrises: `Metrics.pass_at_k({"k": 1})`."""


def _call_member(self: Enum, sample_params: dict[str, Any] | None = None) -> MetricRef:
    """`Metrics.x(sample_params=...)`, as in lighteval."""
    ref: MetricRef = self.value
    return ref(sample_params)


Metrics.__call__ = _call_member  # type: ignore[method-assign,assignment]


def metric_name(metric: Any) -> str:
    """The display name of any metric object (lighteval's, ours, or anything else)."""
    if isinstance(metric, Enum) and not hasattr(metric, "metric_name"):
        inner = getattr(metric.value, "metric_name", None)
        name: Any = inner if inner is not None else metric.name
    elif hasattr(metric, "metric_name"):
        name = metric.metric_name
    elif isinstance(getattr(metric, "name", None), str):
        name = metric.name
    else:
        name = str(metric)
    if isinstance(name, (list, tuple)):
        name = ",".join(str(part) for part in name)
    return _ADDRESS.sub("", str(name))


def metric_category(metric: Any) -> str | None:
    """The sampling method a metric needs (`GENERATIVE`, `LOGPROBS`, ...), when it says."""
    target = (
        metric.value if isinstance(metric, Enum) and not hasattr(metric, "category") else metric
    )
    category = getattr(target, "category", None)
    if category is None:
        return None
    return str(category.value if isinstance(category, Enum) else category)


def metric_identity(metric: Any) -> str:
    """What the snapshot records for one metric, so that swapping it is a content change.

    Our `MetricRef` (or a member holding one) is named by member and parameters. Any other
    object is named by type, display name and category, plus a digest of its whole structure
    (scoring functions and their settings), which tells `f1_score_macro` from `f1_score_micro`
    when both are lighteval objects that `lighteval_adapter` could not name.
    """
    if isinstance(metric, Enum) and isinstance(metric.value, MetricRef):
        metric = metric.value
    if isinstance(metric, MetricRef):
        return metric.identity
    if isinstance(metric, str):
        return metric
    category = metric_category(metric)
    digest = hashlib.sha256(
        json.dumps(describe(metric), sort_keys=True, ensure_ascii=False).encode("utf-8")
    ).hexdigest()[:12]
    label = f"{metric_name(metric)}{f'; {category}' if category else ''}"
    return f"{type(metric).__name__} [{label}] #{digest}"


def describe(value: Any, depth: int = 0) -> Any:
    """A JSON-able description of an object's structure, stable across runs and processes.

    Functions and classes are named by module and qualified name; objects by class and their
    attributes, recursively to a small depth; anything else by a repr without memory addresses.
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Enum):
        return f"{type(value).__qualname__}.{value.name}"
    if depth > 4:
        return _ADDRESS.sub("", repr(value))[:200]
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [describe(item, depth + 1) for item in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, dict):
        return {str(key): describe(item, depth + 1) for key, item in value.items()}
    if isinstance(value, functools.partial):
        return {
            "partial": describe(value.func, depth + 1),
            "args": describe(value.args, depth + 1),
            "keywords": describe(value.keywords, depth + 1),
        }
    if isinstance(value, type) or (callable(value) and hasattr(value, "__qualname__")):
        return f"{getattr(value, '__module__', '?')}.{value.__qualname__}"
    fields = _attributes(value)
    if fields is None:
        return _ADDRESS.sub("", repr(value))[:200]
    described = {key: describe(item, depth + 1) for key, item in fields.items()}
    return {"__class__": f"{type(value).__module__}.{type(value).__qualname__}", **described}


def _attributes(value: Any) -> dict[str, Any] | None:
    """A dataclass's fields, or an object's public instance attributes; None if it has none."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    attributes = getattr(value, "__dict__", None)
    if not isinstance(attributes, dict):
        return None
    return {key: item for key, item in sorted(attributes.items()) if not key.startswith("_")}
