"""Unit tests for the pure snapshot layer: file layout, parsing, hashing, names, and the gate."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

from pytest_evaltasks import Registry, render_plain
from pytest_evaltasks.engine.task import FewShotFromEvalWarning
from pytest_evaltasks.snapshot.format import (
    FORMAT_VERSION,
    PromptHeads,
    RunSettings,
    SnapshotFacts,
    build_snapshot,
    doc_hash,
    parse_snapshot,
)
from pytest_evaltasks.snapshot.gate import Outcome, judge
from pytest_evaltasks.snapshot.storage import snapshot_filename

TASK = """
from pytest_evaltasks import Doc, LightevalTaskConfig

def prompt(line, task_name):
    return Doc(task_name=task_name, query=PREFIX + line["q"] + "\\nA:", choices=[" x", " y"],
               gold_index=line["g"], instruction=INSTRUCTION)

PREFIX = "Q: "
INSTRUCTION = None
TASKS_TABLE = [LightevalTaskConfig(name="t", prompt_function=prompt, hf_repo="o/d",
    hf_subset="s", metrics=["m"], evaluation_splits=["test"], few_shots_split="train",
    stop_sequence=["\\n"], version=VERSION, few_shots_select=SELECT)]
VERSION = 0
SELECT = None
"""


def make_project(tmp_path: Path, rows: int = 12, **overrides: object) -> Registry:
    """A one-task project; `overrides` replace module constants such as PREFIX or VERSION."""
    source = TASK
    for name, value in overrides.items():
        source += f"\n{name} = {value!r}\n"
    source = source.replace("version=VERSION", f"version={overrides.get('VERSION', 0)!r}")
    source = source.replace(
        "few_shots_select=SELECT", f"few_shots_select={overrides.get('SELECT')!r}"
    )
    (tmp_path / "tasks").mkdir(exist_ok=True)
    (tmp_path / "tasks" / "t.py").write_text(source, encoding="utf-8")
    data = tmp_path / "data" / "o" / "d" / "s"
    data.mkdir(parents=True, exist_ok=True)
    for split, count in (("test", rows), ("train", 6)):
        lines = [json.dumps({"q": f"{split} {i}", "g": i % 2}) for i in range(count)]
        (data / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Registry([tmp_path / "tasks"], data_dir=tmp_path / "data")


def snapshot_of(registry: Registry, spec: str = "t|3", settings: RunSettings | None = None):
    """Build the snapshot of the one requested task."""
    (task,) = registry.load(spec)
    return build_snapshot(task, settings or RunSettings())


@pytest.mark.parametrize("select", ["balanced", "random_sampling"])
def test_head_digest_equals_hash_of_the_whole_prompt(select: str, tmp_path: Path) -> None:
    registry = make_project(tmp_path, INSTRUCTION="Answer.\n\n", SELECT=select)
    (task,) = registry.load("t|3")
    heads = PromptHeads("system")
    for doc in task.get_docs():
        whole = hashlib.blake2b(render_plain(doc, "system").encode(), digest_size=8)
        assert heads.digest(doc).hexdigest() == whole.hexdigest()
        whole = hashlib.blake2b(render_plain(doc, "system").encode(), digest_size=8)
        assert doc_hash(heads.digest(doc), None, doc) == doc_hash(whole, None, doc)


def test_parse_reads_back_what_build_wrote(tmp_path: Path) -> None:
    built = snapshot_of(make_project(tmp_path))
    parsed = parse_snapshot(built.text)
    assert parsed.format_version == FORMAT_VERSION
    assert parsed.task == built.facts.task
    assert parsed.settings == built.facts.settings
    assert parsed.doc_hashes == built.facts.doc_hashes
    assert list(parsed.doc_hashes) == [str(i) for i in range(12)]  # sorted numerically
    assert parsed.task["name"] == "t|3"
    assert parsed.task["stop_sequences"] == '["\\n"]'
    assert parsed.task["metrics"] == "m"


def test_shown_docs_quote_every_line_and_stop_at_docs_shown(tmp_path: Path) -> None:
    built = snapshot_of(make_project(tmp_path), settings=RunSettings(docs_shown=2))
    assert built.text.count("[doc ") == 3  # the hashes section plus two docs
    assert "--- prompt (plain text) ---\n| Q: train" in built.text
    assert "\n|\n| Q: train" in built.text  # the blank line between blocks stays visible


def test_parse_rejects_text_that_is_not_a_snapshot() -> None:
    with pytest.raises(ValueError, match="not a pytest-evaltasks snapshot"):
        parse_snapshot("hello\n")


def test_file_names_are_safe_and_unambiguous() -> None:
    names = {snapshot_filename(key) for key in ("mmlu|5", "mmlu5", "MMLU|5", "a/../b|0", "x y|0")}
    assert len(names) == 5
    for name in names:
        assert "/" not in name and ".." not in name.replace("--", "")
        assert name.endswith(".txt")


def _facts(hashes: dict[str, str], version: str = "0", **task: str) -> SnapshotFacts:
    fields = {"version": version, "metrics": "m", **task}
    return SnapshotFacts(FORMAT_VERSION, fields, {"system_prompt": "null"}, hashes, len(hashes))


@pytest.mark.parametrize("update", [False, True])
def test_gate_refuses_changed_prompts_under_the_same_version(update: bool) -> None:
    verdict = judge(_facts({"0": "a", "1": "b"}), _facts({"0": "a", "1": "c"}), "t|0", update)
    assert verdict.outcome is Outcome.REFUSED
    assert verdict.changed_docs == ["1"]
    assert verdict.needs_version_bump
    assert "version" in verdict.headline and "1 doc prompt(s) changed (ids 1)" in verdict.headline


def test_gate_lets_a_versioned_change_through_as_a_diff() -> None:
    verdict = judge(_facts({"0": "a"}), _facts({"0": "b"}, version="1"), "t|0", update=False)
    assert verdict.outcome is Outcome.CHANGED
    assert "version 0 -> 1" in verdict.headline


def test_gate_treats_header_fields_as_content() -> None:
    verdict = judge(_facts({"0": "a"}), _facts({"0": "a"}, metrics="other"), "t|0", update=True)
    assert verdict.outcome is Outcome.REFUSED
    assert "metrics: m -> other" in verdict.headline


def test_gate_allows_unversioned_only_when_asked() -> None:
    old, new = _facts({"0": "a"}), _facts({"0": "b"})
    assert judge(old, new, "t|0", update=True, allow_unversioned=True).outcome is Outcome.CHANGED
    assert judge(old, new, "t|0", update=False, allow_unversioned=True).outcome is Outcome.REFUSED


def test_gate_names_a_settings_change_and_never_calls_it_a_prompt_change() -> None:
    old = _facts({"0": "a"})
    new = SnapshotFacts(FORMAT_VERSION, old.task, {"system_prompt": '"Be brief."'}, {"0": "b"}, 1)
    verdict = judge(old, new, "t|0", update=False)
    assert verdict.outcome is Outcome.REFUSED
    assert "system_prompt" in verdict.headline and not verdict.needs_version_bump


def test_gate_on_format_change_and_version_only_bump() -> None:
    old = _facts({"0": "a"})
    legacy = SnapshotFacts(0, old.task, old.settings, {"0": "zzz"}, 1)
    verdict = judge(legacy, old, "t|0", update=False)
    assert verdict.outcome is Outcome.REFUSED and not verdict.needs_version_bump
    assert "not a prompt change" in verdict.headline
    bumped = judge(old, _facts({"0": "a"}, version="1"), "t|0", update=True)
    assert bumped.outcome is Outcome.CHANGED and bumped.warnings
    assert judge(None, old, "t|0", update=False).outcome is Outcome.NEW
    assert judge(old, _facts({"0": "a"}), "t|0", update=False).outcome is Outcome.SAME


def test_a_prompt_edit_changes_exactly_the_edited_docs(tmp_path: Path) -> None:
    before = snapshot_of(make_project(tmp_path), "t|0").facts
    after = snapshot_of(make_project(tmp_path, PREFIX="Question: "), "t|0").facts
    verdict = judge(before, after, "t|0", update=False)
    assert verdict.outcome is Outcome.REFUSED
    assert sorted(verdict.changed_docs, key=int) == [str(i) for i in range(12)]


def test_docs_are_labelled_by_split_when_there_are_several(tmp_path: Path) -> None:
    registry = make_project(tmp_path)
    config = registry.configs["t"]
    config.evaluation_splits = ["test", "train"]
    (task,) = registry.load("t|0")
    labels = [label for label, _ in task.labelled_docs()]
    assert len(labels) == len(set(labels)) == 18
    assert {label.split("/")[0] for label in labels} == {"test", "train"}


def test_lighteval_style_none_subset_and_splits_are_accepted(tmp_path: Path) -> None:
    """lighteval accepts `hf_subset=None` (default config) and `hf_avail_splits=None`."""
    registry = make_project(tmp_path)
    config = registry.configs["t"]
    config.hf_avail_splits = None
    config.few_shots_split = None
    config.hf_subset = None
    data = tmp_path / "data" / "o" / "d"
    (data / "s").rename(data / "default")
    (task,) = registry.load("t|1")
    assert task.fewshot_split is None  # no splits listed: the pool is the evaluation split
    with pytest.warns(FewShotFromEvalWarning, match="evaluation split"):
        docs = task.get_docs()
    assert len(docs) == 12
    assert all(len(doc.fewshot_samples) == 1 for doc in docs)
    assert all(doc.fewshot_samples[0].query != doc.query for doc in docs)


def test_a_task_file_still_importing_lighteval_gets_a_porting_hint(tmp_path: Path) -> None:
    """lighteval is not installed in the test environment: the broken module says what to do."""
    if importlib.util.find_spec("lighteval") is not None:
        pytest.skip("lighteval is installed here")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "old.py").write_text(
        "from lighteval.tasks.requests import Doc\nTASKS_TABLE = []\n", encoding="utf-8"
    )
    registry = Registry([tmp_path / "tasks"])
    (broken,) = registry.broken
    assert "lighteval is not installed" in broken.error
    assert "from pytest_evaltasks import LightevalTaskConfig, Doc, Metrics" in broken.error
