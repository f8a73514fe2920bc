"""IFEval: prompts with verifiable formatting instructions (word counts, no commas, ...).

Real dataset: ``google/IFEval`` on the Hugging Face Hub, subset ``default``, a single ``train``
split (columns ``key`` int, ``prompt`` str, ``instruction_id_list`` list of str, ``kwargs`` list
of objects, one per instruction). The bundled rows under ``tasks/data/google/IFEval/default/``
are synthetic.

One generative task, ``ifeval``: evaluated on ``train``; the query is the row's ``prompt``
verbatim, as in lighteval 0.13's ``ifeval_prompt`` (which sets an empty-string
``instruction``), with the instruction ids and their arguments kept in ``specific``.

Covers: the ``random_sampling`` few-shot selection with ``few_shots_split`` equal to the
evaluation split (``train`` has at least 6 rows, enough for a 5-shot prompt); a task living in
a ``tasks/<subdir>/main.py`` module. Its ``version`` is 1 where lighteval writes "0.1": a
project's versions are ints.
"""

from __future__ import annotations

from typing import Any

from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics


def ifeval_prompt(line: dict[str, Any], task_name: str) -> Doc:
    """The prompt as the query; nothing to choose from, the checks go in ``specific``."""
    return Doc(
        task_name=task_name,
        query=line["prompt"],
        choices=[""],
        gold_index=0,
        instruction="",
        specific={
            "instructions_id_list": line["instruction_id_list"],
            "kwargs": line["kwargs"],
        },
    )


ifeval = LightevalTaskConfig(
    name="ifeval",
    prompt_function=ifeval_prompt,
    hf_repo="google/IFEval",
    hf_subset="default",
    metrics=[Metrics.ifeval_metric],
    hf_avail_splits=["train"],
    evaluation_splits=["train"],
    few_shots_split="train",
    few_shots_select="random_sampling",
    generation_size=1280,
    stop_sequence=[],
    version=1,
)

TASKS_TABLE: list[LightevalTaskConfig] = [ifeval]

# IFEval has a single split, which lighteval uses both to evaluate and for few-shot examples.
evaltasks_lint_ignore = {"ifeval": ["pool-is-eval-split"]}
