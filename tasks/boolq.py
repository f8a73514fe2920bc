"""BoolQ: yes/no questions about a short passage, in HELM's version of the dataset.

Real dataset: ``lighteval/boolq_helm`` on the Hugging Face Hub, subset ``default`` (columns
``passage``, ``question``, ``answer`` as ``"Yes"``/``"No"``, ``contrast_inputs``, null or
{``passage``, ``question``} lists; HELM's questions end in ``?``, occasionally ``??``). The
original ``google/boolq`` has a boolean ``answer`` instead. The bundled rows under
``tasks/data/lighteval/boolq_helm/default/`` are synthetic.

One task, ``boolq``: evaluated on ``validation``, few-shot pool ``train``; the prompt is
lighteval 0.13's ``boolq_prompt`` (``Passage: ...\\nQuestion: ...\\nAnswer:``, choices
`` Yes``/`` No``; a doubled ``??`` at the end of the question loses one ``?``).

Covers: the ``balanced`` few-shot selection, named explicitly (lighteval leaves
``few_shots_select`` as None, which means ``balanced``; the classes are the gold answers).
"""

from __future__ import annotations

from typing import Any

from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

ANSWERS: tuple[str, str] = ("Yes", "No")


def boolq_prompt(line: dict[str, Any], task_name: str) -> Doc:
    """Passage, question (a trailing ``??`` becomes ``?``), ``Answer:``; choices Yes/No."""
    question: str = line["question"]
    if question.endswith("??"):
        question = question[:-1]
    return Doc(
        task_name=task_name,
        query=f"Passage: {line['passage']}\nQuestion: {question}\nAnswer:",
        choices=[" " + answer for answer in ANSWERS],
        gold_index=ANSWERS.index(line["answer"]),
    )


boolq = LightevalTaskConfig(
    name="boolq",
    prompt_function=boolq_prompt,
    hf_repo="lighteval/boolq_helm",
    hf_subset="default",
    hf_avail_splits=["train", "validation"],
    evaluation_splits=["validation"],
    few_shots_split=None,
    few_shots_select="balanced",
    generation_size=5,
    metrics=[Metrics.exact_match],
    stop_sequence=["\n"],
    version=0,
)

TASKS_TABLE: list[LightevalTaskConfig] = [boolq]
