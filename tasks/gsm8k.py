"""GSM8K: grade-school maths word problems with worked solutions ending in ``#### <answer>``.

Real dataset: ``openai/gsm8k`` on the Hugging Face Hub, subset ``main`` (columns ``question``,
``answer``). The bundled rows under ``tasks/data/openai/gsm8k/main/`` are synthetic.

One task, ``gsm8k``: generative, evaluated on ``test``; the prompt is lighteval 0.13's
``gsm8k_prompt`` (``Question: ...\\nAnswer:``, the full worked solution as the only choice).

Covers: the ``random_sampling_from_train`` few-shot selection (pool: ``train``, which has enough
rows for a 5-shot prompt).
"""

from __future__ import annotations

from typing import Any

from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics


def gsm8k_prompt(line: dict[str, Any], task_name: str) -> Doc:
    """The question after ``Question:``; the gold is the whole worked solution after a space."""
    return Doc(
        task_name=task_name,
        query="Question: " + line["question"] + "\nAnswer:",
        choices=[" " + line["answer"]],
        gold_index=0,
    )


gsm8k = LightevalTaskConfig(
    name="gsm8k",
    prompt_function=gsm8k_prompt,
    hf_repo="openai/gsm8k",
    hf_subset="main",
    hf_avail_splits=["train", "test"],
    evaluation_splits=["test"],
    few_shots_split=None,
    few_shots_select="random_sampling_from_train",
    generation_size=256,
    metrics=[Metrics.expr_gold_metric],
    stop_sequence=["Question:"],
    version=0,
)

TASKS_TABLE: list[LightevalTaskConfig] = [gsm8k]
