"""`LocalDatasets`, the `datasets` module as a harness's task sees it: a missing split and a
dataset with no local copy are said in the lighteval-style form, with what to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_evaltasks.errors import DatasetError
from pytest_evaltasks.sources.local_datasets import LocalDatasets

datasets = pytest.importorskip("datasets")


def _folder(root: Path) -> Path:
    folder = root / "data" / "me" / "quiz" / "default"
    folder.mkdir(parents=True)
    (folder / "test.jsonl").write_text(json.dumps({"q": "x"}) + "\n", encoding="utf-8")
    return folder


def test_a_split_asked_of_the_whole_dataset_names_the_file_to_add(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    loaded = LocalDatasets(datasets, tmp_path / "data", []).load_dataset("me/quiz")
    assert len(loaded["test"]) == 1
    with pytest.raises(DatasetError) as info:
        loaded["train"]  # as lm-eval's task asks for its training split
    assert str(info.value).startswith(
        f"split 'train' not found in {folder} (looked for train.jsonl, .json, .parquet or "
        f".csv); splits there: test. Add the file {folder / 'train.jsonl'}"
    )


def test_a_split_asked_by_name_names_the_file_to_add(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    local = LocalDatasets(datasets, tmp_path / "data", [])
    with pytest.raises(DatasetError) as info:
        local.load_dataset("me/quiz", split="validation")
    assert f"split 'validation' not found in {folder} " in str(info.value)
    assert f"splits there: test. Add the file {folder / 'validation.jsonl'}" in str(info.value)


class _Unreachable:
    """A `datasets` module whose loader cannot reach anything."""

    def load_dataset(self, **kwargs: Any) -> Any:
        raise ConnectionError("no network")


@pytest.mark.parametrize("offline", ["1", ""])
def test_offline_advice_is_given_only_when_offline_is_not_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offline: str
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", offline)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    with pytest.raises(DatasetError) as info:
        LocalDatasets(_Unreachable(), tmp_path, []).load_dataset("me/elsewhere")
    message = str(info.value)
    assert f"at {tmp_path / 'me' / 'elsewhere' / 'default'}" in message
    if offline:
        assert "HF_HUB_OFFLINE is set, and the datasets cache holds no copy either" in message
        assert "set HF_HUB_OFFLINE=1" not in message
    else:
        assert "or set HF_HUB_OFFLINE=1 to use the datasets cache, if it holds one" in message


def test_a_repository_folder_is_read_from_its_own_folder_only(tmp_path: Path) -> None:
    """`data_dir="main"` (a folder of a Hub repository) reads `<root>/<repo>/main`; without that
    folder the default subset's rows are never read in its place: the load fails, naming it."""
    _folder(tmp_path)
    main = tmp_path / "data" / "me" / "quiz" / "main"
    local = LocalDatasets(datasets, tmp_path / "data", [])
    with pytest.raises(DatasetError) as info:
        local.load_dataset("me/quiz", data_dir="main", split="test")
    assert f"(subset 'main') at {main}" in str(info.value)
    main.mkdir()
    (main / "test.jsonl").write_text('{"q": "m1"}\n{"q": "m2"}\n', encoding="utf-8")
    loaded = local.load_dataset("me/quiz", data_dir="main", split="test")
    assert loaded["q"] == ["m1", "m2"]


@pytest.mark.parametrize("name", ["../../../../elsewhere", "ELSEWHERE"])
def test_a_subset_that_would_leave_the_data_root_is_no_local_copy(
    tmp_path: Path, name: str
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    name = str(outside) if name == "ELSEWHERE" else name
    (tmp_path / "data" / "root" / "me" / "quiz").mkdir(parents=True)  # `..` walks through it
    (outside / "test.jsonl").write_text('{"q": "outside"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="no local copy"):
        LocalDatasets(_Unreachable(), tmp_path / "data" / "root", []).load_dataset(
            "me/quiz", data_dir=name
        )
