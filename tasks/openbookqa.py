"""OpenBookQA: elementary science questions that combine a core fact with common knowledge.

Real dataset: ``allenai/openbookqa`` on the Hugging Face Hub, subset ``main`` (columns ``id``,
``question_stem``, ``choices`` {``text``, ``label``}, ``answerKey``). The bundled rows under
``tasks/data/allenai/openbookqa/main/`` are synthetic.

One task, ``openbookqa``: evaluated on both ``validation`` and ``test``, few-shot pool
``train``; the prompt is lighteval 0.13's ``openbookqa_prompt`` (lettered options,
``Answer: ``; the answer is a letter without a leading space).

Covers: a task with two evaluation splits; Docs with an ``instruction``; the ``sequential``
few-shot selection (lighteval leaves ``few_shots_select`` as None, i.e. ``balanced``; set to
``sequential`` here so the suite covers it; prompts are unchanged).
"""

from __future__ import annotations

from string import ascii_uppercase
from typing import Any

from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

HEADER = "The following are multiple choice questions (with answers) about common sense.\n"
ANSWER_KEYS: tuple[str, ...] = ("A", "B", "C", "D", "E")


def openbookqa_prompt(line: dict[str, Any], task_name: str) -> Doc:
    """Header, question stem, lettered options, ``Answer: ``; gold from the answer key."""
    texts: list[str] = line["choices"]["text"]
    options = "".join(
        f"{letter}. {text}\n" for letter, text in zip(ascii_uppercase, texts, strict=False)
    )
    return Doc(
        task_name=task_name,
        query=f"{HEADER}Question: {line['question_stem']}\n{options}Answer: ",
        choices=list(ascii_uppercase[: len(texts)]),
        gold_index=ANSWER_KEYS.index(line["answerKey"].strip()),
        instruction=HEADER,
    )


openbookqa = LightevalTaskConfig(
    name="openbookqa",
    prompt_function=openbookqa_prompt,
    hf_repo="allenai/openbookqa",
    hf_subset="main",
    hf_avail_splits=["train", "test", "validation"],
    evaluation_splits=["validation", "test"],
    few_shots_split=None,
    few_shots_select="sequential",
    generation_size=1,
    metrics=[Metrics.exact_match],
    stop_sequence=["\n"],
    version=0,
)

TASKS_TABLE: list[LightevalTaskConfig] = [openbookqa]
