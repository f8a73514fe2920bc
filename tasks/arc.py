"""ARC (AI2 Reasoning Challenge): grade-school science multiple-choice questions.

Real dataset: ``allenai/ai2_arc`` on the Hugging Face Hub, subsets ``ARC-Easy`` and
``ARC-Challenge`` (columns ``id``, ``question``, ``choices`` {``text``, ``label``},
``answerKey``). The bundled rows under ``tasks/data/allenai/ai2_arc/<subset>/`` are synthetic.

Two tasks, ``arc:easy`` and ``arc:challenge``: evaluated on ``test``; the prompt is lighteval
0.13's ``arc_prompt`` (``Question: ...\\nAnswer:``, each choice text after a space as a
continuation; option labels may be letters or digits).

Covers: the ``random_sampling_from_train`` few-shot selection (pool: ``train``).
"""

from __future__ import annotations

from typing import Any

from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics


def arc_prompt(line: dict[str, Any], task_name: str) -> Doc:
    """Question then ``Answer:``; the choices are the option texts; gold found by label."""
    options = line["choices"]
    return Doc(
        task_name=task_name,
        query="Question: " + line["question"] + "\nAnswer:",
        choices=[" " + text for text in options["text"]],
        gold_index=options["label"].index(line["answerKey"]),
    )


def arc_task(level: str, subset: str, avail_splits: list[str]) -> LightevalTaskConfig:
    """One ARC task, configured as in lighteval 0.13."""
    return LightevalTaskConfig(
        name=f"arc:{level}",
        prompt_function=arc_prompt,
        hf_repo="allenai/ai2_arc",
        hf_subset=subset,
        hf_avail_splits=avail_splits,
        evaluation_splits=["test"],
        few_shots_split=None,
        few_shots_select="random_sampling_from_train",
        generation_size=1,
        metrics=[Metrics.loglikelihood_acc],
        stop_sequence=["\n"],
        version=0,
    )


TASKS_TABLE: list[LightevalTaskConfig] = [
    arc_task("challenge", "ARC-Challenge", ["train", "test"]),
    arc_task("easy", "ARC-Easy", ["train", "validation", "test"]),
]

# ARC questions have three to five options by design.
evaltasks_lint_ignore = {"*": ["choice-count-varies"]}
