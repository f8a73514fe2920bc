"""HellaSwag: pick the most plausible ending of a short scene description.

Real dataset: ``Rowan/hellaswag`` on the Hugging Face Hub (columns ``ind``, ``activity_label``,
``ctx_a``, ``ctx_b``, ``ctx``, ``endings``, ``source_id``, ``split``, ``split_type``, ``label``
as a string, empty in ``test``). The bundled rows under ``tasks/data/Rowan/hellaswag/default/``
are synthetic.

One task, ``hellaswag``: evaluated on ``validation``, few-shot pool ``train``; the prompt is
lighteval 0.13's ``hellaswag_prompt`` (lettered endings, the answer is a letter; note that it
applies ``str.capitalize`` to ``ctx_b``, which also lower-cases the rest of that text).

Covers: Docs with an ``instruction``; the ``random`` few-shot selection (lighteval leaves
``few_shots_select`` as None, i.e. ``balanced``; set to ``random`` here so the suite covers it;
prompts are unchanged).
"""

from __future__ import annotations

from string import ascii_uppercase
from typing import Any

from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

HEADER = "The following are multiple choice questions (with answers) about common sense.\n\n"


def hellaswag_prompt(line: dict[str, Any], task_name: str) -> Doc:
    """Header, ``activity: ctx_a Ctx_b``, lettered endings, ``Answer:``; gold is a letter."""
    letters = ascii_uppercase[: len(line["endings"])]
    scene = f"{line['activity_label']}: {line['ctx_a']} {line['ctx_b'].capitalize()}"
    endings = "".join(
        f"{letter}. {ending}\n" for letter, ending in zip(letters, line["endings"], strict=True)
    )
    label = line["label"]
    return Doc(
        task_name=task_name,
        query=f"{HEADER}Question: {scene}\n{endings}Answer:",
        choices=[f" {letter}" for letter in letters],
        gold_index=-1 if label == "" else int(label),
        instruction=HEADER,
    )


hellaswag = LightevalTaskConfig(
    name="hellaswag",
    prompt_function=hellaswag_prompt,
    hf_repo="Rowan/hellaswag",
    hf_subset="default",
    hf_avail_splits=["train", "test", "validation"],
    evaluation_splits=["validation"],
    few_shots_split=None,
    few_shots_select="random",
    generation_size=1,
    metrics=[Metrics.exact_match],
    stop_sequence=["\n"],
    version=0,
)

TASKS_TABLE: list[LightevalTaskConfig] = [hellaswag]
