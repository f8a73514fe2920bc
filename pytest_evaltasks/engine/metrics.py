"""A small stand-in for lighteval's `Metrics` enum, so task files import without lighteval.

The harness never computes metrics; it only records their names in snapshots. Each member
carries lighteval's `metric_name`, so a task gets the same recorded names whether it uses this
stand-in or the real enum.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


@dataclass(frozen=True)
class MetricRef:
    """A metric named by a task: enough to record it, nothing to compute."""

    name: str
    metric_name: str | tuple[str, ...]

    def __call__(self, sample_params: dict[str, Any] | None = None) -> MetricRef:
        """Parametrise like lighteval does: parameters become part of the metric name."""
        if not sample_params:
            return self
        suffix = "&".join(f"{key}={_param_text(value)}" for key, value in sample_params.items())
        if isinstance(self.metric_name, tuple):
            return replace(self, metric_name=tuple(f"{m}:{suffix}" for m in self.metric_name))
        return replace(self, metric_name=f"{self.metric_name}:{suffix}")


def _param_text(value: Any) -> str:
    """Name callables by qualified name: a repr with a memory address would change every run."""
    if callable(value):
        return str(getattr(value, "__qualname__", getattr(value, "__name__", type(value).__name__)))
    return str(value)


_METRIC_NAMES: dict[str, str | tuple[str, ...]] = {
    "acc_golds_likelihood": "acc",
    "avg_at_n": "avg@n",
    "avg_at_n_math": "avg@n",
    "bert_score": ("BERTScore-P", "BERTScore-R", "BERTScore-F"),
    "bits_per_byte": "bits_per_byte",
    "bleu": "bleu",
    "bleu_1": "bleu_1",
    "bleu_4": "bleu_4",
    "bleurt": "bleurt",
    "byte_perplexity": "byte_perplexity",
    "chrf": "chrf",
    "chrf_plus": "chrf++",
    "copyright": ("longest_common_prefix_length", "edit_distance", "edit_similarity"),
    "drop": ("em", "f1"),
    "exact_match": "em",
    "expr_gold_metric": "extractive_match",
    "extractiveness": (
        "summarization_coverage",
        "summarization_density",
        "summarization_compression",
    ),
    "f1_score": "f1",
    "f1_score_macro": "f1",
    "f1_score_micro": "f1",
    "faithfulness": "summac",
    "g_pass_at_k": "g-pass@k",
    "g_pass_at_k_math": "math-g-pass@k",
    "g_pass_at_k_latex": "latex-g-pass@k",
    "gpqa_instruct_metric": "extractive_match",
    "gpqa_instruct_pass_at_k": "gpqa_pass@k",
    "ifeval_metric": (
        "prompt_level_strict_acc",
        "inst_level_strict_acc",
        "prompt_level_loose_acc",
        "inst_level_loose_acc",
    ),
    "loglikelihood_acc": "acc",
    "loglikelihood_f1": "loglikelihood_f1",
    "maj_at_n": "maj@n",
    "mcc": "mcc",
    "mrr": "mrr",
    "multi_f1_numeric": "mf1",
    "pass_at_k": "pass@k",
    "pass_at_k_math": "pass@k",
    "pass_at_k_letters": "pass@k",
    "prediction_perplexity": "ppl",
    "quasi_exact_match": "qem",
    "recall_at_k": "recall",
    "rouge1": "rouge1",
    "rouge2": "rouge2",
    "rougeL": "rougeL",
    "rougeLsum": "rougeLsum",
    "rouge_t5": ("rouge1", "rouge2", "rougeL", "rougeLsum"),
    "simpleqa_judge": ("simpleqa_judge",),
    "target_perplexity": "ppl",
    "ter": "ter",
    "truthfulqa_mc_metrics": ("truthfulqa_mc1", "truthfulqa_mc2"),
    "word_perplexity": "word_perplexity",
}

Metrics = Enum(  # type: ignore[misc]
    "Metrics",
    {name: MetricRef(name, metric_name) for name, metric_name in _METRIC_NAMES.items()},
    module=__name__,
)
"""`Metrics.exact_match` and friends; a call parametrises: `Metrics.pass_at_k({"k": 1})`."""


def _call_member(self: Enum, sample_params: dict[str, Any] | None = None) -> MetricRef:
    """`Metrics.x(sample_params=...)`, as in lighteval."""
    ref: MetricRef = self.value
    return ref(sample_params)


Metrics.__call__ = _call_member  # type: ignore[method-assign,assignment]


def metric_name(metric: Any) -> str:
    """The name a snapshot records for any metric object (lighteval's, ours, or anything else)."""
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
