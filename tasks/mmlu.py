"""MMLU: four-option multiple-choice questions over 57 academic and professional subjects.

Real dataset: ``lighteval/mmlu`` on the Hugging Face Hub (one subset per subject; columns
``question``, ``subject``, ``choices``, ``answer``). The bundled rows under
``tasks/data/lighteval/mmlu/<subject>/`` are synthetic (see ``tasks/data/make_mmlu_data.py``).

Each task is ``mmlu:<subject>``: evaluated on ``test``, few-shot examples from ``dev``,
prompts identical to lighteval 0.13's ``mmlu_prompt``.

Covers: Docs with an ``instruction`` (the subject header); ``fewshot_sorting_class`` set by the
prompt function (the gold choice's text); the ``balanced`` few-shot selection (lighteval's
behaviour when ``few_shots_select`` is None, kept here as in lighteval).
"""

from __future__ import annotations

from string import ascii_uppercase
from typing import Any

from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

SUBJECTS: tuple[str, ...] = (
    "abstract_algebra",
    "anatomy",
    "astronomy",
    "business_ethics",
    "clinical_knowledge",
    "college_biology",
    "college_chemistry",
    "college_computer_science",
    "college_mathematics",
    "college_medicine",
    "college_physics",
    "computer_security",
    "conceptual_physics",
    "econometrics",
    "electrical_engineering",
    "elementary_mathematics",
    "formal_logic",
    "global_facts",
    "high_school_biology",
    "high_school_chemistry",
    "high_school_computer_science",
    "high_school_european_history",
    "high_school_geography",
    "high_school_government_and_politics",
    "high_school_macroeconomics",
    "high_school_mathematics",
    "high_school_microeconomics",
    "high_school_physics",
    "high_school_psychology",
    "high_school_statistics",
    "high_school_us_history",
    "high_school_world_history",
    "human_aging",
    "human_sexuality",
    "international_law",
    "jurisprudence",
    "logical_fallacies",
    "machine_learning",
    "management",
    "marketing",
    "medical_genetics",
    "miscellaneous",
    "moral_disputes",
    "moral_scenarios",
    "nutrition",
    "philosophy",
    "prehistory",
    "professional_accounting",
    "professional_law",
    "professional_medicine",
    "professional_psychology",
    "public_relations",
    "security_studies",
    "sociology",
    "us_foreign_policy",
    "virology",
    "world_religions",
)
"""The 57 MMLU subjects, in lighteval's order; each is also the Hub subset name."""

ANSWER_CHOICES: list[str] = [" A", " B", " C", " D"]


def mmlu_header(subject: str) -> str:
    """The instruction line that opens every MMLU prompt, ending in a blank line."""
    topic = subject.replace("_", " ")
    return f"The following are multiple choice questions (with answers) about {topic}.\n\n"


def mmlu_prompt(line: dict[str, Any], task_name: str) -> Doc:
    """Header, question, one ``X. text`` line per option, then ``Answer:``; gold is a letter."""
    header = mmlu_header(line["subject"])
    option_lines = [
        f"\n{letter}. {text}"
        for letter, text in zip(ascii_uppercase, line["choices"], strict=False)
    ]
    query = header + "Question: " + line["question"] + "".join(option_lines) + "\nAnswer:"
    answer = line["answer"]
    gold = ascii_uppercase.index(answer) if isinstance(answer, str) else answer
    return Doc(
        task_name=task_name,
        query=query,
        choices=list(ANSWER_CHOICES),
        gold_index=gold,
        fewshot_sorting_class=line["choices"][gold],
        instruction=header,
    )


def mmlu_task(subject: str) -> LightevalTaskConfig:
    """The ``mmlu:<subject>`` task, configured as in lighteval 0.13."""
    return LightevalTaskConfig(
        name=f"mmlu:{subject}",
        prompt_function=mmlu_prompt,
        hf_repo="lighteval/mmlu",
        hf_subset=subject,
        hf_avail_splits=["auxiliary_train", "test", "validation", "dev"],
        evaluation_splits=["test"],
        few_shots_split="dev",
        few_shots_select=None,
        generation_size=5,
        metrics=[Metrics.exact_match],
        stop_sequence=["\n"],
        version=0,
    )


TASKS_TABLE: list[LightevalTaskConfig] = [mmlu_task(subject) for subject in SUBJECTS]
