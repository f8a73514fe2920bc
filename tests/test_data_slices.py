"""Saved slices in process: which folder a data source's slice goes to, that the row lookup
reads it from there, and what a slice holds before anything is written.

`datasets` reads local files here (the `json` builder), offline, into the test's own cache.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_evaltasks import Doc, Task, TaskConfig
from pytest_evaltasks.engine.data_slices import (
    MANIFEST,
    SliceSource,
    prepare_slice,
    splits_needed,
    write_slice,
)
from pytest_evaltasks.engine.rows import RowSource, local_dataset_dir, slice_dir
from pytest_evaltasks.errors import DatasetError


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def prompt(row: dict[str, Any], task_name: str) -> Doc:
    return Doc(query=str(row["q"]), choices=["x"], gold_index=0)


def make_task(data_dir: Path, num_fewshots: int = 0, **overrides: Any) -> Task:
    fields: dict[str, Any] = {
        "name": "slice_task",
        "prompt_function": prompt,
        "hf_repo": "json",
        "hf_subset": None,
        "metrics": ["acc"],
        "evaluation_splits": ["test"],
        "few_shots_split": "train",
        "num_fewshots": num_fewshots,
    }
    fields.update(overrides)
    return Task(TaskConfig(**fields), data_dir=data_dir)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory, the working directory, with a data root and an offline cache."""
    root = tmp_path / "project"
    (root / "tasks" / "data").mkdir(parents=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf_cache")
    return root


# --- where a slice goes ----------------------------------------------------------------------


def test_without_data_files_the_slice_is_the_local_dataset_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert slice_dir(data, "org/ds", None) == local_dataset_dir(data, "org/ds", None)
    assert slice_dir(data, "org/ds", "main") == data / "org" / "ds" / "main"


def test_packaged_builder_data_files_are_keyed_by_the_files_datasets_reads(project: Path) -> None:
    data = project / "tasks" / "data"
    relative = slice_dir(data, "json", None, {"test": "raw/a.jsonl"})
    assert relative.parent == data / "json"
    assert re.fullmatch(r"default\.files-[0-9a-f]{12}", relative.name)
    # The same files however they are written (datasets resolves them against the cwd).
    assert slice_dir(data, "json", None, {"test": ["./raw/a.jsonl"]}) == relative
    assert slice_dir(data, "json", None, {"test": str(project / "raw" / "a.jsonl")}) == relative
    assert slice_dir(data, "json", None, "raw/a.jsonl") == slice_dir(
        data, "json", None, {"train": ["raw/a.jsonl"]}
    )
    # Other files, another split, or the same text from another directory: another folder.
    others = [
        slice_dir(data, "json", None, {"test": "raw/b.jsonl"}),
        slice_dir(data, "json", None, {"validation": "raw/a.jsonl"}),
        slice_dir(data, "json", None, {"test": ["raw/a.jsonl", "raw/b.jsonl"]}),
        slice_dir(data, "json", "other", {"test": "raw/a.jsonl"}),
    ]
    assert len({relative, *others}) == 5


def test_the_data_files_key_is_the_same_in_every_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = []
    for clone in (tmp_path / "alice" / "proj", tmp_path / "ci" / "checkout" / "proj"):
        clone.mkdir(parents=True)
        monkeypatch.chdir(clone)
        data = clone / "tasks" / "data"
        built_from_file = {"test": str(clone / "tasks" / "raw" / "a.jsonl")}  # `__file__`-style
        names.append(slice_dir(data, "json", None, built_from_file).name)
        names.append(slice_dir(data, "json", None, {"test": "tasks/raw/a.jsonl"}).name)
    assert len(set(names)) == 1


def test_repository_data_files_are_relative_to_the_repository_not_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    monkeypatch.chdir(tmp_path)
    here = slice_dir(data, "org/ds", "main", {"test": "data/test-*.parquet"})
    assert here.parent == data / "org" / "ds" and here.name.startswith("main.files-")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert slice_dir(data, "org/ds", "main", {"test": "./data/test-*.parquet"}) == here


# --- the row lookup reads the slice ----------------------------------------------------------


def test_a_data_files_task_reads_its_slice_not_its_files(tmp_path: Path) -> None:
    data = tmp_path / "data"
    files = {"validation": "raw/eval_*.jsonl"}
    source = RowSource("t", "org/ds", "default", hf_data_files=files, data_dir=data)
    repo_folder = data / "org" / "ds" / "default"
    write_jsonl(repo_folder / "raw" / "eval_1.jsonl", [{"q": "from the repository folder"}])
    assert source.rows("validation") == [{"q": "from the repository folder"}]
    saved = slice_dir(data, "org/ds", "default", files)
    write_jsonl(saved / "validation.jsonl", [{"q": "from the slice"}])
    assert source.local_dir == saved
    assert source.rows("validation") == [{"q": "from the slice"}]


def test_a_slice_of_one_json_task_hides_nothing_from_another(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_jsonl(slice_dir(data, "json", None, {"test": "a.jsonl"}) / "test.jsonl", [{"q": "a"}])
    alpha = RowSource("alpha", "json", None, hf_data_files={"test": "a.jsonl"}, data_dir=data)
    beta = RowSource("beta", "json", None, hf_data_files={"test": "b.jsonl"}, data_dir=data)
    assert alpha.rows("test") == [{"q": "a"}]
    assert beta.local_dir is None  # beta still reads its own files through datasets
    assert beta.expected_dir == slice_dir(data, "json", None, {"test": "b.jsonl"})


# --- what a slice holds ----------------------------------------------------------------------


def test_a_0_shot_task_needs_only_its_evaluation_splits(tmp_path: Path) -> None:
    assert splits_needed(make_task(tmp_path, 0)) == (["test"], ["train"])
    assert splits_needed(make_task(tmp_path, 3)) == (["test", "train"], [])


def test_preparing_a_slice_writes_nothing_and_records_the_data_files(project: Path) -> None:
    data = project / "tasks" / "data"
    write_jsonl(project / "raw" / "a.jsonl", [{"q": f"a{i}"} for i in range(5)])
    outside = write_jsonl(project.parent / "shared" / "shots.jsonl", [{"q": "shot"}])
    files = {"test": "raw/a.jsonl", "train": str(outside)}
    task = make_task(data, 0, hf_data_files=files)
    source = SliceSource.for_task(task, data)
    source.add(task)

    prepared = prepare_slice(source, 2, root=project)

    assert not (data / "json").exists()
    manifest = json.loads(prepared.files[MANIFEST])
    assert manifest["hf_data_files"] == {
        "test": ["raw/a.jsonl"],  # relative to the root
        "train": [outside.as_posix()],  # outside it: absolute
    }
    assert manifest["saved_rows"] == {"test": 2, "train": 1}
    saved = write_slice(prepared)
    assert saved.directory == slice_dir(data, "json", None, files)
    assert Task(task.config, data_dir=data).source.local_dir == saved.directory
    assert [doc.query for doc in Task(task.config, data_dir=data).eval_docs()] == ["a0", "a1"]


def test_two_revisions_of_one_dataset_cannot_share_a_slice(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = make_task(data, 0, name="one", hf_repo="org/ds", hf_revision="v1")
    source = SliceSource.for_task(first, data)
    source.add(first)
    with pytest.raises(DatasetError, match=r"task 'two'.*'one'.*same hf_revision"):
        source.add(make_task(data, 0, name="two", hf_repo="org/ds", hf_revision="v2"))
