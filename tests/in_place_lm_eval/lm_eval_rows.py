"""Synthetic rows for real lm-eval tasks, with each dataset's column names and types.

`write_rows(data_dir, task)` writes `<data_dir>/<dataset_path>/<dataset_name or default>/
<split>.jsonl` for every split the task reads, as the data root layout says. The rows are made
up (never the real datasets'), varied enough that every prompt rule is exercised: choice
counts that differ, labels that are strings or ints, text with spaces at the ends.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

Row = dict[str, Any]


def _arc(split: str, i: int, rnd: random.Random) -> Row:
    labels = ["A", "B", "C", "D"] if i % 4 else ["1", "2", "3"]
    return {
        "id": f"{split}-{i}",
        "question": f"Which {split} thing number {i} is {rnd.choice(['red', 'big', 'old'])}?",
        "choices": {"text": [f"option {label.lower()} of {i}" for label in labels],
                    "label": labels},
        "answerKey": labels[i % len(labels)],
    }  # fmt: skip


def _hellaswag(split: str, i: int, rnd: random.Random) -> Row:
    return {
        "ind": i,
        "activity_label": f"Activity {i % 3}",
        "ctx_a": f"A person [title] walks to the {split} door {i}.",
        "ctx_b": "then they",
        "ctx": f"A person walks to the door {i}. then they",
        "endings": [f"open it [step] {k}." for k in range(4)],
        "source_id": f"src-{i}",
        "split": split,
        "split_type": "indomain",
        "label": str(i % 4),
    }


def _gsm8k(split: str, i: int, rnd: random.Random) -> Row:
    a, b = rnd.randint(2, 30), rnd.randint(2, 30)
    return {
        "question": f"Tom has {a} apples and buys {b} more ({split} {i}). How many apples?",
        "answer": f"He has {a} + {b} = <<{a}+{b}={a + b}>>{a + b} apples.\n#### {a + b}",
    }


def _boolq(split: str, i: int, rnd: random.Random) -> Row:
    return {
        "question": f"is the {split} sky number {i} blue",
        "passage": f"Passage {i}: the sky is often blue during the day.",
        "idx": i,
        "label": i % 2,
    }


def _mmlu(split: str, i: int, rnd: random.Random) -> Row:
    return {
        "question": f"  Which bone number {i} ({split}) is longest? ",
        "subject": "anatomy",
        "choices": [f"bone {k} of {i}" for k in range(4)],
        "answer": i % 4,
    }


def _winogrande(split: str, i: int, rnd: random.Random) -> Row:
    return {
        "sentence": f"The trophy {i} does not fit in the suitcase because _ is too big ({split}).",
        "option1": "the trophy",
        "option2": "the suitcase",
        "answer": "1" if i % 2 else "2",
    }


def _bbh(split: str, i: int, rnd: random.Random) -> Row:
    return {
        "input": f"Which statement is sarcastic?\nOptions:\n(A) Statement {i}\n(B) Other {i}",
        "target": "(A)" if i % 2 else "(B)",
    }


def _wikitext(split: str, i: int, rnd: random.Random) -> Row:
    words = " ".join(rnd.choice(["cat", "sat", "on", "the", "mat", "1 @,@ 000"]) for _ in range(9))
    return {"page": f" = Page {split} {i} = \n\n {words} @-@ end . \n"}


def _tiny_mc(split: str, i: int, rnd: random.Random) -> Row:
    count = 2 + i % 3
    return {
        "topic": ["birds", "rivers"][i % 2],
        "question": f"  Which {split} answer {i} is right ",
        "choices": [f" choice {k} of {i} " for k in range(count)],
        "label": i % count,
    }


def _tiny_ll(split: str, i: int, rnd: random.Random) -> Row:
    return {"text": f"The {split} story {i} ended with the word {rnd.choice(['moon', 'sun'])}"}


def _tiny_gpqa(split: str, i: int, rnd: random.Random) -> Row:
    return {
        "Question": f"Which {split} element is number {i}?",
        "Correct Answer": f" right {i} ",
        "Incorrect Answer 1": f"wrong {i}a",
        "Incorrect Answer 2": f"wrong {i}b",
        "Incorrect Answer 3": f"wrong {i}c [title] more",
    }


Maker = Callable[[str, int, random.Random], Row]

SCHEMAS: dict[str, tuple[str, str | None, dict[str, int], Maker]] = {
    "arc_easy": ("allenai/ai2_arc", "ARC-Easy", {"train": 9, "validation": 4, "test": 6}, _arc),
    "arc_challenge": (
        "allenai/ai2_arc", "ARC-Challenge", {"train": 9, "validation": 4, "test": 5}, _arc
    ),
    "arc_challenge_llama": (
        "allenai/ai2_arc", "ARC-Challenge", {"train": 9, "validation": 4, "test": 5}, _arc
    ),
    "hellaswag": ("Rowan/hellaswag", None, {"train": 8, "validation": 5, "test": 3}, _hellaswag),
    "gsm8k": ("openai/gsm8k", "main", {"train": 9, "test": 4}, _gsm8k),
    "boolq": ("aps/super_glue", "boolq", {"train": 8, "validation": 5}, _boolq),
    "mmlu_anatomy": ("cais/mmlu", "anatomy", {"dev": 5, "validation": 3, "test": 4}, _mmlu),
    "winogrande": (
        "allenai/winogrande", "winogrande_xl", {"train": 8, "validation": 5}, _winogrande
    ),
    "bbh_fewshot_snarks": ("SaylorTwift/bbh", "snarks", {"test": 4}, _bbh),
    "wikitext": (
        "EleutherAI/wikitext_document_level", "wikitext-2-raw-v1",
        {"train": 3, "validation": 3, "test": 3}, _wikitext,
    ),
    # the custom YAML folder beside the tests (yaml_tasks/)
    "tiny_mc": ("evaltasks/tiny_mc", None, {"train": 8, "test": 5}, _tiny_mc),
    "tiny_gen": ("evaltasks/tiny_gen", "main", {"train": 5, "test": 4}, _gsm8k),
    "tiny_ll": ("evaltasks/tiny_ll", None, {"validation": 6}, _tiny_ll),
    "tiny_shuffled": ("evaltasks/tiny_gpqa", None, {"train": 7}, _tiny_gpqa),
}  # fmt: skip
"""Task name -> (dataset_path, dataset_name, rows per split, row maker)."""


def write_rows(data_dir: Path, task: str, seed: int = 0) -> Path:
    """Write the synthetic splits of `task`'s dataset into the data root; its folder."""
    path, name, sizes, make = SCHEMAS[task]
    folder = data_dir / path / (name or "default")
    folder.mkdir(parents=True, exist_ok=True)
    rnd = random.Random(f"{task}-{seed}")
    for split, size in sizes.items():
        rows = [make(split, i, rnd) for i in range(size)]
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        (folder / f"{split}.jsonl").write_text(text, encoding="utf-8")
    return folder
