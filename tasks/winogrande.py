"""WinoGrande: fill the blank in a sentence with one of two names or nouns.

Real dataset: ``allenai/winogrande`` on the Hugging Face Hub, subset ``winogrande_xl`` (columns
``sentence`` with one ``_`` blank, ``option1``, ``option2``, ``answer`` as ``"1"``/``"2"``, empty
in ``test``). The bundled rows under ``tasks/data/allenai/winogrande/winogrande_xl/`` are
synthetic.

One task, ``winogrande``: evaluated on ``validation``, few-shot pool ``train``; the prompt is
lighteval 0.13's ``winogrande_prompt`` (the text before the blank is the query; each option plus
the text after the blank is a continuation).

Covers: the ``random_sampling`` few-shot selection (as in lighteval; ``train`` has at least 6
rows, enough for a 5-shot prompt); a prompt function that drops rows: a sentence without exactly
one ``_`` blank gives no Doc (lighteval's prompt raises ``ValueError`` on such a row; for every
well-formed row the Doc is identical to lighteval's).
"""

from __future__ import annotations

from typing import Any

from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics


def winogrande_prompt(line: dict[str, Any], task_name: str) -> Doc | None:
    """Query is the sentence up to the blank; each choice is an option then the rest."""
    sentence: str = line["sentence"]
    if sentence.count("_") != 1:
        return None
    before, after = sentence.split("_")
    rest = after.strip()
    answer = line["answer"]
    return Doc(
        task_name=task_name,
        query=before,
        choices=[f"{line['option1']} {rest}", f"{line['option2']} {rest}"],
        gold_index=-1 if answer == "" else int(answer) - 1,
    )


winogrande = LightevalTaskConfig(
    name="winogrande",
    prompt_function=winogrande_prompt,
    hf_repo="allenai/winogrande",
    hf_subset="winogrande_xl",
    hf_avail_splits=["train", "test", "validation"],
    evaluation_splits=["validation"],
    few_shots_split=None,
    few_shots_select="random_sampling",
    generation_size=-1,
    metrics=[Metrics.loglikelihood_acc],
    stop_sequence=["\n"],
    version=1,
)

TASKS_TABLE: list[LightevalTaskConfig] = [winogrande]

# The query is the sentence up to the blank, ending in a space before the continuation.
evaltasks_lint_ignore = {"winogrande": ["trailing-space"]}
