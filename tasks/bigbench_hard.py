"""BIG-Bench Hard: hard multiple-choice reasoning tasks from BIG-bench.

Real dataset: ``lighteval/bbh`` on the Hugging Face Hub, one subset per task, a single ``train``
split. Columns read by the prompt: ``input`` (str), ``choices`` (list of str), ``target_idx``
(int), and the optional, nullable strings ``task_prefix``, ``example_input_prefix``,
``choice_prefix``, ``example_output_prefix``. The bundled rows under
``tasks/data/lighteval/bbh/<subset>/`` are synthetic; their schema follows what lighteval's
prompt reads (no real slice of ``lighteval/bbh`` was available; ``lukaemon/bbh`` is the same
questions with the options inside ``input`` and a ``target`` string).

Tasks ``bigbench_hard:<subtask>`` for six of lighteval's eighteen subtasks, built from one list;
the prompt is lighteval 0.13's ``bbh_prompt`` (null columns are dropped first, then defaults
fill in the prefixes). Note lighteval's name ``causal_judgment`` reads subset
``causal_judgement``.

Covers: Docs with an ``instruction`` (the row's ``task_prefix``; None when it is absent); a task
with no few-shot split (``train`` is both the only and the evaluation split, so few-shot
examples come from the evaluation split and the harness warns); ``balanced`` selection through
lighteval's default (None).
"""

from __future__ import annotations

from string import ascii_uppercase
from typing import Any

from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

SUBTASKS: tuple[tuple[str, str], ...] = (
    ("causal_judgment", "causal_judgement"),
    ("date_understanding", "date_understanding"),
    ("logical_deduction_three_objects", "logical_deduction_three_objects"),
    ("navigate", "navigate"),
    ("sports_understanding", "sports_understanding"),
    ("temporal_sequences", "temporal_sequences"),
)
"""(task name suffix, Hub subset) for each bundled subtask."""

DEFAULT_INPUT_PREFIX = "\nQuestion: "
DEFAULT_CHOICE_PREFIX = "\n  Choices: "
DEFAULT_OUTPUT_PREFIX = "\nAnswer: "


def bbh_prompt(line: dict[str, Any], task_name: str) -> Doc:
    """Prefix, input, lettered choices, answer prefix; a null column counts as absent."""
    row = {key: value for key, value in line.items() if value is not None}
    choices: list[str] = row["choices"]
    parts = [
        row.get("task_prefix", ""),
        row.get("example_input_prefix", DEFAULT_INPUT_PREFIX),
        row["input"],
        row.get("choice_prefix", DEFAULT_CHOICE_PREFIX),
        *(f"\n{letter}. {text}" for letter, text in zip(ascii_uppercase, choices, strict=False)),
        row.get("example_output_prefix", DEFAULT_OUTPUT_PREFIX),
    ]
    return Doc(
        task_name=task_name,
        query="".join(parts),
        choices=list(ascii_uppercase[: len(choices)]),
        gold_index=row["target_idx"],
        instruction=row.get("task_prefix"),
    )


def bbh_task(subtask: str, subset: str) -> LightevalTaskConfig:
    """One ``bigbench_hard:<subtask>`` task, configured as in lighteval 0.13."""
    return LightevalTaskConfig(
        name=f"bigbench_hard:{subtask}",
        prompt_function=bbh_prompt,
        hf_repo="lighteval/bbh",
        hf_subset=subset,
        hf_avail_splits=["train"],
        evaluation_splits=["train"],
        few_shots_split=None,
        few_shots_select=None,
        generation_size=-1,
        metrics=[Metrics.loglikelihood_acc],
        stop_sequence=["</s>", "Q=", "\n\n"],
        version=0,
    )


TASKS_TABLE: list[LightevalTaskConfig] = [bbh_task(name, subset) for name, subset in SUBTASKS]

# lighteval's BBH prompt, kept as it is: its query is stripped after the instruction, so the
# answer letter follows "Answer:" without a space, or the prompt ends in one; some subtasks
# have a varying number of options, and the few-shot pool is the single evaluation split.
evaltasks_lint_ignore = {
    "*": ["glued-at-join", "trailing-space", "choice-count-varies", "pool-is-eval-split"]
}
