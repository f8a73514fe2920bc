"""Metrics as a task names them: a stand-in for lighteval's `Metrics` enum, and their identity.

The harness never computes metrics. The snapshot records which metric a task is scored with, by
full identity (`snapshot.facts.metric_identity`: member name, parameters, recorded names,
sampling method), not by display name, since `f1_score_macro` and `f1_score_micro` share the
display name `f1`. Each stand-in member carries lighteval's `metric_name` and category, so a
task records the same identity whether it uses this stand-in or lighteval's own enum (see
`sources/lighteval/adapter`).
"""

from __future__ import annotations

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


_PRIVATE_PACKAGE = re.compile(r"_evaltasks_[0-9a-f]+\.")


def _param_text(value: Any) -> str:
    """A parameter in a metric's display name: callables by qualified name, plain values as
    themselves, any other object by its type. Never a memory address or a private module name:
    the name is recorded, and must be the same in every clone and run (the parameter's value
    itself is recorded by its canonical identity)."""
    if callable(value):
        return str(getattr(value, "__qualname__", getattr(value, "__name__", type(value).__name__)))
    if value is None or isinstance(value, (str, int, float, bool)):
        return str(value)
    text = _PRIVATE_PACKAGE.sub("", _ADDRESS.sub("", str(value)))
    return text if len(text) <= 80 else f"<{type(value).__qualname__}>"


_G, _L, _P = SamplingMethod.GENERATIVE, SamplingMethod.LOGPROBS, SamplingMethod.PERPLEXITY


class Metrics(Enum):
    """`Metrics.exact_match` and friends, as lighteval names them; a call parametrises:
    `Metrics.pass_at_k({"k": 1})`.

    Each member holds lighteval's `metric_name` and the sampling method the metric needs. A
    class (not the functional `Enum(...)` call) so that type checkers see every member.
    """

    acc_golds_likelihood = MetricRef("acc_golds_likelihood", "acc", _L)
    avg_at_n = MetricRef("avg_at_n", "avg@n", _G)
    avg_at_n_math = MetricRef("avg_at_n_math", "avg@n", _G)
    bert_score = MetricRef("bert_score", ("BERTScore-P", "BERTScore-R", "BERTScore-F"), _G)
    bits_per_byte = MetricRef("bits_per_byte", "bits_per_byte", _P)
    bleu = MetricRef("bleu", "bleu", _G)
    bleu_1 = MetricRef("bleu_1", "bleu_1", _G)
    bleu_4 = MetricRef("bleu_4", "bleu_4", _G)
    bleurt = MetricRef("bleurt", "bleurt", _G)
    byte_perplexity = MetricRef("byte_perplexity", "byte_perplexity", _P)
    chrf = MetricRef("chrf", "chrf", _G)
    chrf_plus = MetricRef("chrf_plus", "chrf++", _G)
    copyright = MetricRef(
        "copyright", ("longest_common_prefix_length", "edit_distance", "edit_similarity"), _G
    )
    drop = MetricRef("drop", ("em", "f1"), _G)
    exact_match = MetricRef("exact_match", "em", _G)
    expr_gold_metric = MetricRef("expr_gold_metric", "extractive_match", _G)
    extractiveness = MetricRef(
        "extractiveness",
        ("summarization_coverage", "summarization_density", "summarization_compression"),
        _G,
    )
    extractiveness_de = MetricRef(
        "extractiveness_de",
        ("summarization_coverage", "summarization_density", "summarization_compression"),
        _G,
    )
    extractiveness_fr = MetricRef(
        "extractiveness_fr",
        ("summarization_coverage", "summarization_density", "summarization_compression"),
        _G,
    )
    extractiveness_it = MetricRef(
        "extractiveness_it",
        ("summarization_coverage", "summarization_density", "summarization_compression"),
        _G,
    )
    f1_score = MetricRef("f1_score", "f1", _G)
    f1_score_macro = MetricRef("f1_score_macro", "f1", _G)
    f1_score_micro = MetricRef("f1_score_micro", "f1", _G)
    faithfulness = MetricRef("faithfulness", "summac", _G)
    g_pass_at_k = MetricRef("g_pass_at_k", "g-pass@k", _G)
    g_pass_at_k_math = MetricRef("g_pass_at_k_math", "math-g-pass@k", _G)
    g_pass_at_k_latex = MetricRef("g_pass_at_k_latex", "latex-g-pass@k", _G)
    loglikelihood_acc = MetricRef("loglikelihood_acc", "acc", _L)
    loglikelihood_f1 = MetricRef("loglikelihood_f1", "loglikelihood_f1", _L)
    maj_at_n = MetricRef("maj_at_n", "maj@n", _G)
    mcc = MetricRef("mcc", "mcc", _L)
    mrr = MetricRef("mrr", "mrr", _L)
    multi_f1_numeric = MetricRef("multi_f1_numeric", "mf1", _L)
    pass_at_k = MetricRef("pass_at_k", "pass@k", _G)
    pass_at_k_math = MetricRef("pass_at_k_math", "pass@k", _G)
    pass_at_k_letters = MetricRef("pass_at_k_letters", "pass@k", _G)
    prediction_perplexity = MetricRef("prediction_perplexity", "ppl", _P)
    recall_at_k = MetricRef("recall_at_k", "recall", _L)
    rouge_t5 = MetricRef("rouge_t5", ("rouge1", "rouge2", "rougeL", "rougeLsum"), _G)
    rouge1 = MetricRef("rouge1", "rouge1", _G)
    rouge2 = MetricRef("rouge2", "rouge2", _G)
    rougeL = MetricRef("rougeL", "rougeL", _G)
    rougeLsum = MetricRef("rougeLsum", "rougeLsum", _G)
    simpleqa_judge = MetricRef("simpleqa_judge", ("simpleqa_judge",), _G)
    target_perplexity = MetricRef("target_perplexity", "ppl", _L)
    ter = MetricRef("ter", "ter", _G)
    truthfulqa_mc_metrics = MetricRef(
        "truthfulqa_mc_metrics", ("truthfulqa_mc1", "truthfulqa_mc2"), _L
    )
    word_perplexity = MetricRef("word_perplexity", "word_perplexity", _P)
    gpqa_instruct_metric = MetricRef("gpqa_instruct_metric", "extractive_match", _G)
    gpqa_instruct_pass_at_k = MetricRef("gpqa_instruct_pass_at_k", "gpqa_pass@k", _G)
    # Not members of lighteval 0.13's enum (its ifeval task defines its own metric object),
    # kept so that tasks ported from older lighteval releases still import.
    ifeval_metric = MetricRef(
        "ifeval_metric",
        (
            "prompt_level_strict_acc",
            "inst_level_strict_acc",
            "prompt_level_loose_acc",
            "inst_level_loose_acc",
        ),
        _G,
    )
    quasi_exact_match = MetricRef("quasi_exact_match", "qem", _G)

    def __call__(self, sample_params: dict[str, Any] | None = None) -> MetricRef:
        """`Metrics.x(sample_params=...)`, as in lighteval."""
        ref: MetricRef = self.value
        return ref(sample_params)


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
