"""Write the synthetic MMLU rows under ``tasks/data/lighteval/mmlu/<subject>/{dev,test}.jsonl``.

Every row is invented: a short, plausible question about one of three topics per subject, built
from a handful of templates with deterministic numbers. Columns and JSON types follow the real
``lighteval/mmlu`` dataset: ``question`` (str), ``subject`` (str), ``choices`` (4 str),
``answer`` (int 0-3). Re-running the script rewrites the same bytes.

Usage: ``python tasks/data/make_mmlu_data.py``
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

OUT_DIR = Path(__file__).resolve().parent / "lighteval" / "mmlu"
DEV_ROWS = 5
TEST_ROWS = 4

TOPICS: dict[str, tuple[str, str, str]] = {
    "abstract_algebra": ("group homomorphisms", "cyclic subgroups", "field extensions"),
    "anatomy": ("the cranial nerves", "the rotator cuff", "the hepatic portal system"),
    "astronomy": ("stellar parallax", "red giant stars", "the Kuiper belt"),
    "business_ethics": ("whistleblowing policies", "stakeholder theory", "conflicts of interest"),
    "clinical_knowledge": ("wound dressing", "blood pressure measurement", "hand hygiene"),
    "college_biology": ("meiosis", "the Krebs cycle", "gene regulation"),
    "college_chemistry": ("reaction kinetics", "molecular orbital theory", "buffer solutions"),
    "college_computer_science": ("hash tables", "graph traversal", "the halting problem"),
    "college_mathematics": ("eigenvalues", "uniform convergence", "Taylor series"),
    "college_medicine": ("renal physiology", "pharmacokinetics", "the cardiac cycle"),
    "college_physics": ("rotational inertia", "Maxwell's equations", "blackbody radiation"),
    "computer_security": ("buffer overflows", "public-key encryption", "phishing attacks"),
    "conceptual_physics": ("buoyancy", "terminal velocity", "the Doppler effect"),
    "econometrics": ("heteroskedasticity", "instrumental variables", "autocorrelation"),
    "electrical_engineering": ("Thévenin equivalents", "op-amp circuits", "three-phase power"),
    "elementary_mathematics": ("place value", "equivalent fractions", "perimeter"),
    "formal_logic": ("truth tables", "modus tollens", "predicate quantifiers"),
    "global_facts": ("world literacy rates", "global energy use", "urban population growth"),
    "high_school_biology": ("photosynthesis", "cell membranes", "natural selection"),
    "high_school_chemistry": ("the periodic table", "balancing equations", "molar mass"),
    "high_school_computer_science": ("binary numbers", "loops", "Boolean expressions"),
    "high_school_european_history": (
        "the Congress of Vienna",
        "the Hanseatic League",
        "the Enlightenment",
    ),
    "high_school_geography": ("river deltas", "population pyramids", "plate boundaries"),
    "high_school_government_and_politics": (
        "the electoral college",
        "judicial review",
        "federalism",
    ),
    "high_school_macroeconomics": ("fiscal policy", "inflation", "the money multiplier"),
    "high_school_mathematics": ("quadratic equations", "arithmetic sequences", "right triangles"),
    "high_school_microeconomics": ("price elasticity", "marginal cost", "market equilibrium"),
    "high_school_physics": ("Newton's laws", "projectile motion", "electric circuits"),
    "high_school_psychology": ("classical conditioning", "short-term memory", "sleep stages"),
    "high_school_statistics": (
        "sampling bias",
        "the normal distribution",
        "confidence intervals",
    ),
    "high_school_us_history": (
        "the Louisiana Purchase",
        "the New Deal",
        "the civil rights movement",
    ),
    "high_school_world_history": ("the Silk Road", "the Meiji Restoration", "decolonization"),
    "human_aging": ("bone density", "retirement transitions", "memory in later life"),
    "human_sexuality": ("puberty", "sexual orientation research", "contraception"),
    "international_law": ("treaty reservations", "state immunity", "the law of the sea"),
    "jurisprudence": ("legal positivism", "natural law theory", "the rule of law"),
    "logical_fallacies": ("straw man arguments", "false dilemmas", "appeals to authority"),
    "machine_learning": ("gradient descent", "overfitting", "decision trees"),
    "management": ("span of control", "change management", "motivation theory"),
    "marketing": ("market segmentation", "brand loyalty", "pricing strategy"),
    "medical_genetics": (
        "autosomal recessive inheritance",
        "genetic counselling",
        "trisomy",
    ),
    "miscellaneous": ("household trivia", "famous landmarks", "everyday units"),
    "moral_disputes": ("animal welfare", "the ethics of punishment", "euthanasia debates"),
    "moral_scenarios": ("promise keeping", "honesty at work", "helping strangers"),
    "nutrition": ("dietary fibre", "vitamin D", "protein requirements"),
    "philosophy": ("Cartesian doubt", "virtue ethics", "the problem of induction"),
    "prehistory": ("Neolithic farming", "cave paintings", "Bronze Age trade"),
    "professional_accounting": (
        "depreciation schedules",
        "revenue recognition",
        "audit sampling",
    ),
    "professional_law": ("adverse possession", "hearsay evidence", "contract formation"),
    "professional_medicine": (
        "diabetic ketoacidosis",
        "community-acquired pneumonia",
        "anaemia",
    ),
    "professional_psychology": (
        "psychometric testing",
        "cognitive behavioural therapy",
        "ethics codes",
    ),
    "public_relations": ("press releases", "crisis communication", "media relations"),
    "security_studies": ("deterrence theory", "nuclear proliferation", "human security"),
    "sociology": ("social stratification", "socialization", "urbanization"),
    "us_foreign_policy": ("the Marshall Plan", "containment", "NATO enlargement"),
    "virology": ("viral replication", "vaccine design", "zoonotic spillover"),
    "world_religions": ("pilgrimage traditions", "sacred texts", "monastic life"),
}
"""Three invented study topics per subject; the keys are the 57 MMLU subjects in order."""

Question = tuple[str, str, list[str]]
"""(question text, correct answer, three distractors)."""


def _numeric(answer: int, rng: random.Random, unit: str = "") -> tuple[str, list[str]]:
    """The answer and three distinct, positive, nearby wrong numbers, as text."""
    offsets = [-3, -2, -1, 1, 2, 4, 5]
    wrong = [answer + offset for offset in rng.sample(offsets, 7) if answer + offset > 0][:3]
    return f"{answer}{unit}", [f"{value}{unit}" for value in wrong]


def _course_title(subject: str) -> str:
    """A subject's name as a course title."""
    return subject.replace("_", " ")


def _with_article(phrase: str) -> str:
    """The phrase with "a" or "an" in front."""
    return ("an " if phrase[0] in "aeiou" else "a ") + phrase


def _other_courses(subject: str, rng: random.Random) -> list[str]:
    """Three other subjects' course titles, chosen deterministically."""
    others = [name for name in TOPICS if name != subject]
    return [_course_title(name) for name in rng.sample(others, 3)]


def _remaining_terms(subject: str, topic: str, rng: random.Random) -> Question:
    total, known = rng.randint(12, 30), rng.randint(3, 11)
    answer, wrong = _numeric(total - known, rng)
    text = (
        f"A study guide on {topic} lists {total} key terms, and a student has already "
        f"learned {known} of them. How many key terms remain to be learned?"
    )
    return text, answer, wrong


def _sessions(subject: str, topic: str, rng: random.Random) -> Question:
    per_week, weeks = rng.randint(2, 4), rng.randint(5, 12)
    answer, wrong = _numeric(per_week * weeks, rng)
    seminar = _with_article(_course_title(subject)).capitalize()
    text = (
        f"{seminar} seminar on {topic} meets {per_week} times a week for {weeks} weeks. "
        "How many sessions does it hold in total?"
    )
    return text, answer, wrong


def _which_course(subject: str, topic: str, rng: random.Random) -> Question:
    text = f"In which course would a unit on {topic} most likely appear?"
    return text, _course_title(subject), _other_courses(subject, rng)


def _exam_score(subject: str, topic: str, rng: random.Random) -> Question:
    questions, points = rng.randint(10, 25), rng.choice([2, 4, 5])
    answer, wrong = _numeric(questions * points, rng, " points")
    text = (
        f"An exam on {topic} has {questions} questions worth {points} points each. "
        "What is the highest possible score?"
    )
    return text, answer, wrong


def _lecture_end(subject: str, topic: str, rng: random.Random) -> Question:
    start, length = rng.randint(0, 20), rng.choice([45, 50, 75, 90])
    end = 9 * 60 + start + length
    answer = f"{end // 60}:{end % 60:02d}"
    wrong = []
    for shift in (-15, 10, 30):
        moved = end + shift
        wrong.append(f"{moved // 60}:{moved % 60:02d}")
    text = (
        f"A lecture on {topic} starts at 9:{start:02d} and lasts {length} minutes. "
        "At what time does it end?"
    )
    return text, answer, wrong


def _sentence_completion(subject: str, topic: str, rng: random.Random) -> Question:
    text = f"Which course would put this title on its reading list?\n“An introduction to {topic}”"
    return text, _course_title(subject), _other_courses(subject, rng)


def _library_shelves(subject: str, topic: str, rng: random.Random) -> Question:
    books, percent = 20 * rng.randint(2, 9), rng.choice([10, 25, 50, 75])
    answer, wrong = _numeric(books * (100 - percent) // 100, rng)
    text = (
        f"A library holds {books} books on {topic}. If {percent}% of them are on loan, "
        "how many are on the shelves?"
    )
    return text, answer, wrong


TEMPLATES: tuple[Callable[[str, str, random.Random], Question], ...] = (
    _remaining_terms,
    _sessions,
    _which_course,
    _exam_score,
    _lecture_end,
    _sentence_completion,
    _library_shelves,
)


def make_row(subject: str, split: str, index: int) -> dict[str, object]:
    """One synthetic row; the same arguments always give the same row."""
    rng = random.Random(f"mmlu/{subject}/{split}/{index}")
    offset = list(TOPICS).index(subject) + (0 if split == "dev" else DEV_ROWS)
    template = TEMPLATES[(offset + index) % len(TEMPLATES)]
    topic = TOPICS[subject][index % 3]
    question, answer, wrong = template(subject, topic, rng)
    gold = rng.randrange(4)
    choices = list(wrong)
    choices.insert(gold, answer)
    return {"question": question, "subject": subject, "choices": choices, "answer": gold}


def write_split(subject: str, split: str, count: int) -> Path:
    """Write ``count`` rows of one subject's split as JSON Lines."""
    path = OUT_DIR / subject / f"{split}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(make_row(subject, split, i), ensure_ascii=False) for i in range(count)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main() -> None:
    """Write dev and test rows for every subject."""
    for subject in TOPICS:
        write_split(subject, "dev", DEV_ROWS)
        write_split(subject, "test", TEST_ROWS)


if __name__ == "__main__":
    main()
