"""`--evaltasks-save-data` end to end: where slices go, what is refused, and that an error
leaves the data root as it was.

The "Hub" is a local dataset folder or the `json` builder with `hf_data_files`, both of which
`datasets` loads offline; the datasets cache is the test's own.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

# `datasets` reads HF_* when it is imported: each run needs a fresh interpreter.
pytestmark = pytest.mark.subprocess


def rows(prefix: str, count: int) -> list[dict[str, object]]:
    return [{"q": f"{prefix} {i}", "label": i % 2} for i in range(count)]


def write_jsonl(path: Path, items: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")


def tree(directory: Path) -> dict[str, bytes]:
    """Every file under `directory`, by relative path, as bytes."""
    return {
        path.relative_to(directory).as_posix(): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(autouse=True)
def offline(project: EvalProject, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(project.root.parent / "hf_cache"))


def save(project: EvalProject, spec: str, count: int = 3) -> pytest.RunResult:
    return project.run("--evaltasks", spec, "--evaltasks-save-data", str(count))


# --- a local hf_repo is never written into --------------------------------------------------


@pytest.mark.parametrize("where", ["absolute", "relative-escaping", "holding-the-data-root"])
def test_a_local_folder_is_never_written_into_nor_anything_outside_the_data_root(
    project: EvalProject, where: str
) -> None:
    # Its slice would go to: inside the folder itself; outside the data root (tasks/<name>);
    # inside the folder, which holds the data root.
    sibling = f"{project.root.name}-hub"
    hf_repo = {
        "absolute": str(project.root / "hub" / "quiz"),
        "relative-escaping": f"../{sibling}",
        "holding-the-data-root": "tasks",
    }[where]
    source = project.root / hf_repo
    write_jsonl(source / "test.jsonl", rows("hub", 5))
    write_jsonl(source / "train.jsonl", rows("shot", 5))
    project.write_tasks(f'name="quiz", hf_repo={hf_repo!r}, hf_subset=None')
    source_before, data_before = tree(source), tree(project.root / "tasks" / "data")

    result = save(project, "quiz|1")

    assert result.ret == 1
    output = result.stdout.str()
    assert "task 'quiz'" in output and repr(hf_repo) in output
    assert "writes only inside the data root" in output
    assert "hf_repo='org/name' is sliced to" in output  # says what to do
    assert tree(source) == source_before, "the source dataset was written into"
    assert tree(project.root / "tasks" / "data") == data_before
    assert not (project.root / "tasks" / sibling).exists()


def test_a_relative_local_folder_is_sliced_into_the_data_root_not_into_itself(
    project: EvalProject,
) -> None:
    source = project.root / "hub" / "quiz"
    write_jsonl(source / "test.jsonl", rows("hub", 8))
    write_jsonl(source / "train.jsonl", rows("shot", 8))
    project.write_tasks('name="quiz", hf_repo="hub/quiz", hf_subset=None')
    before = tree(source)

    saved = save(project, "quiz|2")

    assert saved.ret == 0, saved.stdout.str()
    saved.stdout.fnmatch_lines(["quiz|2: saved test 3 of 8, train 3 of 8 rows to *"])
    assert tree(source) == before
    slice_dir = project.root / "tasks" / "data" / "hub" / "quiz" / "default"
    assert sorted(tree(slice_dir)) == ["MANIFEST", "test.jsonl", "train.jsonl"]
    shutil.rmtree(project.root / "hub")  # the source is gone: the slice is all there is
    project.run("--evaltasks", "quiz|2", "--snapshot-update").assert_outcomes(passed=1)
    assert "docs: 3" in project.snapshot("quiz|2").read_text(encoding="utf-8")


# --- hf_data_files: a slice per set of data files, found by later runs ----------------------

JSON_TASKS = (
    'name="alpha", hf_repo="json", hf_subset=None, hf_avail_splits=["test"], '
    'hf_data_files={"test": "raw/alpha.jsonl"}',
    'name="beta", hf_repo="json", hf_subset=None, hf_avail_splits=["test"], '
    'hf_data_files={"test": "raw/beta.jsonl"}',
)


def test_json_tasks_with_different_data_files_get_their_own_slices(project: EvalProject) -> None:
    write_jsonl(project.root / "raw" / "alpha.jsonl", rows("alpha", 6))
    write_jsonl(project.root / "raw" / "beta.jsonl", rows("beta", 6))
    project.write_tasks(*JSON_TASKS)

    saved = save(project, "alpha,beta")

    assert saved.ret == 0, saved.stdout.str()
    folders = sorted((project.root / "tasks" / "data" / "json").iterdir())
    assert [folder.name.split(".files-")[0] for folder in folders] == ["default", "default"]
    by_task = {}
    for folder in folders:
        manifest = json.loads((folder / "MANIFEST").read_text(encoding="utf-8"))
        by_task[manifest["saved_for"]] = (folder, manifest)
    assert set(by_task) == {"alpha", "beta"}
    for name, (folder, manifest) in by_task.items():
        assert manifest["hf_data_files"] == {"test": [f"raw/{name}.jsonl"]}  # relative to root
        assert (folder / "test.jsonl").read_text(encoding="utf-8").splitlines() == [
            json.dumps(row) for row in rows(name, 3)
        ]
    saved.stdout.fnmatch_lines_random(
        [f"{name}|0: saved test 3 of 6 rows to tasks/data/json/default.files-*" for name in by_task]
    )

    # Later runs read the slices, never the original (relative) files.
    shutil.rmtree(project.root / "raw")
    project.run("--evaltasks", "alpha,beta", "--snapshot-update").assert_outcomes(passed=2)
    project.run("--evaltasks", "alpha,beta").assert_outcomes(passed=2)
    for name, other in (("alpha", "beta"), ("beta", "alpha")):
        text = project.snapshot(f"{name}|0").read_text(encoding="utf-8")
        assert f"{name} 2" in text and "docs: 3" in text
        assert other not in text.replace('"name": "beta"', "")


# --- 0-shot tasks need only their evaluation splits ------------------------------------------


def test_a_0_shot_task_saves_without_the_few_shot_split_it_does_not_read(
    project: EvalProject,
) -> None:
    write_jsonl(project.root / "hub" / "nodev" / "test.jsonl", rows("eval", 4))
    project.write_tasks('name="nodev", hf_repo="hub/nodev", hf_subset=None')  # few-shot: train
    slice_dir = project.root / "tasks" / "data" / "hub" / "nodev" / "default"

    refused = save(project, "nodev|2")
    assert refused.ret == 1
    refused.stdout.fnmatch_lines(["*task 'nodev': split 'train' not in dataset*it has: test*"])
    assert not slice_dir.exists()

    saved = save(project, "nodev|0")
    assert saved.ret == 0, saved.stdout.str()
    saved.stdout.fnmatch_lines(["nodev|0: saved test 3 of 4 rows to *; train not saved*0 shots*"])
    assert sorted(tree(slice_dir)) == ["MANIFEST", "test.jsonl"]
    manifest = json.loads((slice_dir / "MANIFEST").read_text(encoding="utf-8"))
    assert list(manifest["not_saved"]) == ["train"]
    shutil.rmtree(project.root / "hub")
    project.run("--evaltasks", "nodev|0", "--snapshot-update").assert_outcomes(passed=1)


# --- every split of every task is checked before anything is written -------------------------


def test_an_error_in_any_task_leaves_the_data_root_as_it_was(project: EvalProject) -> None:
    write_jsonl(project.root / "hub" / "good" / "test.jsonl", rows("good", 4))
    write_jsonl(project.root / "hub" / "good" / "train.jsonl", rows("shot", 4))
    write_jsonl(project.root / "hub" / "bad" / "test.jsonl", rows("bad", 4))
    project.write_tasks(
        'name="good", hf_repo="hub/good", hf_subset=None',
        'name="bad", hf_repo="hub/bad", hf_subset=None, evaluation_splits=["validation"], '
        'hf_avail_splits=["validation"]',
    )
    before = tree(project.root / "tasks" / "data")

    result = save(project, "good|1,bad")

    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "bad|0: task 'bad': split 'validation' not in dataset 'hub/bad'*",
            "nothing was saved: tasks*data is as it was",
        ]
    )
    assert tree(project.root / "tasks" / "data") == before


# --- the message when the Hub cannot be reached ----------------------------------------------

NO_NETWORK = """\
import pytest_evaltasks.engine.rows as rows

rows.hub_reachable = lambda timeout=3.0: False
"""


@pytest.mark.parametrize("mode", ["hub-unreachable", "offline-mode"])
def test_without_the_hub_the_message_names_the_data_root_and_what_to_do(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    if mode == "hub-unreachable":
        monkeypatch.delenv("HF_HUB_OFFLINE")
        monkeypatch.delenv("HF_DATASETS_OFFLINE")
        (project.root / "conftest.py").write_text(NO_NETWORK, encoding="utf-8")
    project.write_tasks('name="far", hf_repo="org-zz/not-cached-zz", hf_subset=None')

    result = save(project, "far")

    assert result.ret == 1
    output = result.stdout.str()
    data_root = project.root / "tasks" / "data"
    assert f"in the data root {data_root}" in output
    assert str(data_root / "org-zz" / "not-cached-zz" / "default") in output
    assert "task 'far'" in output and "cannot save a slice of 'org-zz/not-cached-zz'" in output
    assert "<data root>" not in output and "no local data root" not in output
    assert "--evaltasks-save-data" not in output  # the command just run
    assert "commit a slice saved" in output
    if mode == "hub-unreachable":
        assert "cannot be reached" in output and "Connect to the network once" in output
    else:
        assert "set HF_HUB_OFFLINE=0" in output
