"""PIQA: choose the better of two solutions to an everyday physical goal.

Real dataset: ``ybisk/piqa`` on the Hugging Face Hub, subset ``plain_text`` (columns ``goal``,
``sol1``, ``sol2``, ``label`` as an int, ``-1`` in ``test``). The bundled rows under
``tasks/data/ybisk/piqa/plain_text/`` are synthetic.

One task, ``piqa``: evaluated on both ``validation`` and ``test``, few-shot pool ``train``; the
prompt is lighteval 0.13's ``piqa_prompt`` (lettered solutions, ``Answer: ``; the choices are the
letters ``A``/``B`` for evaluated rows but the solution texts for few-shot rows, so a few-shot
example is answered with the solution text).

Covers: a task with two evaluation splits; a prompt that reads the ``__few_shots`` flag; Docs
with an ``instruction``; ``balanced`` selection through lighteval's default (None).
"""

from __future__ import annotations

from typing import Any

from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

HEADER = "The following are multiple choice questions (with answers) about common sense.\n"
LETTERS: tuple[str, str] = ("A", "B")


def piqa_prompt(line: dict[str, Any], task_name: str) -> Doc:
    """Header, goal, ``A.``/``B.`` solutions, ``Answer: ``; few-shot rows answer in full text."""
    solutions = [line["sol1"], line["sol2"]]
    listed = "".join(
        f"{letter}. {solution}\n" for letter, solution in zip(LETTERS, solutions, strict=True)
    )
    return Doc(
        task_name=task_name,
        query=f"{HEADER}Question: {line['goal']}\n{listed}Answer: ",
        choices=solutions if line.get("__few_shots", False) else list(LETTERS),
        gold_index=int(line["label"]),
        instruction=HEADER,
    )


piqa = LightevalTaskConfig(
    name="piqa",
    prompt_function=piqa_prompt,
    hf_repo="ybisk/piqa",
    hf_subset="plain_text",
    hf_avail_splits=["train", "test", "validation"],
    evaluation_splits=["validation", "test"],
    few_shots_split=None,
    few_shots_select=None,
    generation_size=1,
    metrics=[Metrics.exact_match],
    stop_sequence=["\n"],
    version=0,
)

TASKS_TABLE: list[LightevalTaskConfig] = [piqa]
