"""Docs of every shape lighteval's pipeline renders: no choices, a string of choices, choices
that are lists of aliases. They are rendered and recorded as lighteval renders them; what
lighteval itself cannot render is refused with an error naming the task and doc."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_evaltasks import Doc, Registry, render_messages, render_plain
from pytest_evaltasks.engine.rendered import DocsRendered
from pytest_evaltasks.engine.run_settings import RunSettings
from pytest_evaltasks.errors import EvalTaskError
from pytest_evaltasks.lint.rules import lint
from pytest_evaltasks.snapshot.built import build_snapshot
from pytest_evaltasks.snapshot.parse import parse_snapshot

MODULE = """
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

def prompt(row, task_name):
    return Doc(query=row["q"] + "\\nA:", choices=CHOICES(row), gold_index=GOLD(row))

{shape}

TASKS_TABLE = [LightevalTaskConfig(name="t", prompt_function=prompt, hf_repo="o/d",
    hf_subset="s", metrics=[Metrics.exact_match], evaluation_splits=["test"],
    few_shots_split="train", few_shots_select={select!r})]
"""

SHAPES = {
    "none": "CHOICES = lambda row: None\nGOLD = lambda row: None",
    "string": 'CHOICES = lambda row: "ABCD"\nGOLD = lambda row: row["g"]',
    "aliases": 'CHOICES = lambda row: [[row["a"], row["a"].upper()], ["other"]]\n'
    "GOLD = lambda row: 0",
    "tuple-aliases": 'CHOICES = lambda row: [(row["a"], row["a"].upper()), ("other",)]\n'
    "GOLD = lambda row: 0",
}


def registry(tmp_path: Path, shape: str, select: str | None = "sequential") -> Registry:
    (tmp_path / "tasks").mkdir(parents=True, exist_ok=True)
    source = MODULE.format(shape=SHAPES[shape], select=select)
    (tmp_path / "tasks" / "t.py").write_text(textwrap.dedent(source), encoding="utf-8")
    data = tmp_path / "data" / "o" / "d" / "s"
    data.mkdir(parents=True, exist_ok=True)
    for split in ("test", "train"):
        rows = [{"q": f"{split} {i}", "g": i % 4, "a": f"ans{i}"} for i in range(5)]
        text = "".join(json.dumps(row) + "\n" for row in rows)
        (data / f"{split}.jsonl").write_text(text, encoding="utf-8")
    return Registry([tmp_path / "tasks"], data_dir=tmp_path / "data")


def test_no_choices_renders_and_records_at_zero_shots(tmp_path: Path) -> None:
    (task,) = registry(tmp_path, "none").load("t|0")
    result = task.build()
    built = build_snapshot(DocsRendered.of(task, result), RunSettings(), root=tmp_path)
    text = built.text(1)
    assert "choices: null" in text and "golds: null" in text
    parse_snapshot(text)  # the file reads back
    assert render_plain(result.docs[0][1]) == result.docs[0][1].query
    assert all(f.rule != "empty-text" for f in lint(built.rendered))


def test_no_choices_with_few_shots_is_refused_as_lighteval_fails_on_it(tmp_path: Path) -> None:
    (task,) = registry(tmp_path, "none").load("t|2")
    with pytest.raises(EvalTaskError, match=r"few-shot example id \d has no gold answer"):
        task.build()
    (balanced,) = registry(tmp_path, "none", select=None).load("t|2")
    with pytest.raises(EvalTaskError, match="neither a fewshot_sorting_class nor a gold"):
        balanced.build()


def test_a_string_of_choices_is_indexed_by_character(tmp_path: Path) -> None:
    (task,) = registry(tmp_path, "string").load("t|1")
    result = task.build()
    _, doc = result.docs[0]
    example = doc.fewshot_samples[0]
    assert example.get_golds() == ["ABCD"[example.gold_index]]  # type: ignore[index]
    assert render_plain(doc).startswith(f"{example.query} {'ABCD'[example.gold_index]}\n\n")  # type: ignore[index]
    text = build_snapshot(DocsRendered.of(task, result), RunSettings(), root=tmp_path).text(1)
    assert 'choices: "ABCD"' in text


def test_a_gold_outside_a_string_of_choices_is_refused(tmp_path: Path) -> None:
    reg = registry(tmp_path, "string")
    data = tmp_path / "data" / "o" / "d" / "s" / "test.jsonl"
    data.write_text(json.dumps({"q": "x", "g": 7, "a": "y"}) + "\n", encoding="utf-8")
    (task,) = reg.load("t|0")
    with pytest.raises(EvalTaskError, match=r"'gold_index' 7 is out of range for 4 choice"):
        task.build()


@pytest.mark.parametrize("shape", ["aliases", "tuple-aliases"])
def test_choices_that_are_lists_of_aliases_show_every_alias_as_a_gold(
    tmp_path: Path, shape: str
) -> None:
    (task,) = registry(tmp_path, shape).load("t|1")
    result = task.build()
    _, doc = result.docs[0]
    assert doc.get_golds() == [doc.choices[0][0], doc.choices[0][0].upper()]  # type: ignore[index]
    example = doc.fewshot_samples[0]
    first_alias = example.choices[0][0]  # type: ignore[index]
    assert render_plain(doc).startswith(f"{example.query} {first_alias}\n\n")
    assert render_messages(doc)[1] == {"role": "assistant", "content": first_alias}
    text = build_snapshot(DocsRendered.of(task, result), RunSettings(), root=tmp_path).text(1)
    assert "golds: [" in text
    copied = task.get_docs()[0]
    copied.choices[0].append("edited")  # type: ignore[union-attr]
    assert "edited" not in task.get_docs()[0].choices[0]  # the caller's copy is its own


def test_the_shapes_hash_apart(tmp_path: Path) -> None:
    from pytest_evaltasks.snapshot.fingerprint import DocHasher

    def digest(choices: object) -> str:
        return DocHasher().digest(Doc(query="q", choices=choices, gold_index=0))  # type: ignore[arg-type]

    assert len({digest("AB"), digest(["A", "B"]), digest([["A", "B"]]), digest(None)}) == 4


def test_lint_reads_every_shape(tmp_path: Path) -> None:
    for shape in SHAPES:
        (task,) = registry(tmp_path / shape, shape).load("t|0")
        lint(DocsRendered.of(task, task.build()))  # no crash on None, str or alias lists
