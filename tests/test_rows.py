"""Loading rows (prompt steps 2-3): the local data root gives what `datasets` gives.

The steps are those of docs/differences-from-lighteval.md.

Every comparison reads the same file twice, once through the local loader and once through
`datasets.load_dataset`, and compares the row dicts including key order. Nothing touches the
network: the Hub path is exercised by pointing `hf_repo` at a local folder, in offline mode.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pytest_evaltasks import Doc, Task, TaskConfig
from pytest_evaltasks.engine import rows as rows_module
from pytest_evaltasks.engine.rows import RowSource
from pytest_evaltasks.errors import DatasetError, EvalTaskError

datasets.disable_progress_bars()

Row = dict[str, Any]


# --- helpers ---------------------------------------------------------------------------------


def write_jsonl(path: Path, rows: list[Row]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8"
    )
    return path


def write_json_array(path: Path, rows: list[Row]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def hf_rows(path: Path, builder: str, cache: Path) -> list[Row]:
    """The rows `datasets` reads from one file."""
    dataset = datasets.load_dataset(
        builder, data_files=str(path), split="train", cache_dir=str(cache)
    )
    return [dict(row) for row in dataset]


def local_rows(data_dir: Path, split: str = "validation") -> list[Row]:
    """The rows the local loader reads for `org/ds` (subset `default`)."""
    return RowSource("t", "org/ds", "default", data_dir=data_dir).rows(split)


def assert_same_rows(ours: list[Row], theirs: list[Row]) -> None:
    """Same values, same types (1.0 vs 1 matters to a prompt), same key order."""
    assert ours == theirs
    assert [list(row) for row in ours] == [list(row) for row in theirs]
    assert _types(ours) == _types(theirs)


def _types(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _types(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_types(item) for item in value]
    return type(value).__name__


def recording_prompt(seen: list[Row]):
    """A prompt function that records a copy of every row it is given."""

    def prompt(row: Row, task_name: str) -> Doc:
        seen.append(dict(row))
        return Doc(query=str(row.get("q")), choices=["x"], gold_index=0)

    return prompt


def make_config(prompt, **overrides: Any) -> TaskConfig:
    fields: dict[str, Any] = {
        "name": "rows_task",
        "prompt_function": prompt,
        "hf_repo": "org/ds",
        "hf_subset": "default",
        "metrics": ["acc"],
    }
    fields.update(overrides)
    return TaskConfig(**fields)


# --- the same file through both loaders ------------------------------------------------------

JSON_CASES: dict[str, list[Row]] = {
    "missing_keys_across_rows": [
        {"q": "a", "x": 1},
        {"y": "only here", "q": "b"},
        {"q": "c", "z": [1], "x": 3},
    ],
    "int_float_top_level": [{"n": 1}, {"n": 2.5}, {"n": None}, {"n": 3}],
    "int_float_in_lists": [{"l": [1, 2]}, {"l": [2.5]}, {"l": []}, {"l": None}],
    "int_float_in_nested_lists": [{"l": [[1], [2.5, 3]]}, {"l": [[4]]}],
    "nested_objects_equal_keys": [
        {"m": {"a": 1, "b": "x", "c": [1]}},
        {"m": {"a": 2.5, "b": "y", "c": [0.5]}},
        {"m": None},
    ],
    "nested_objects_equal_keys_other_order": [{"m": {"a": 1, "b": 2}}, {"m": {"b": 3, "a": 4}}],
    "nested_objects_differing_keys": [
        {"m": {"a": 1}},
        {"m": {"b": "two", "c": None}},
        {"m": {"a": 3, "b": "x"}},
    ],
    "list_of_objects_differing_keys": [
        {"kwargs": [{"num_words": 300, "relation": "less than"}, {}]},
        {"kwargs": [{"keywords": ["a", "b"]}]},
    ],
    "list_of_objects_equal_keys_int_float": [{"o": [{"v": 1}, {"v": 2.5}]}, {"o": [{"v": 3}]}],
    "unicode": [
        {"q": "héllo wörld ✓", "k": "日本語のテキスト"},
        {"q": "e\u0301 combining, emoji 😀, rtl עברית", "k": "tab\tand\nnewline"},
        {"q": 'quotes " and \\ backslash', "k": "\u2028 line separator"},
    ],
    "unicode_keys": [{"ключ": "значение", "😀": [1]}, {"ключ": "x", "😀": [2.5]}],
    "bools_and_nulls": [{"b": True, "s": None}, {"b": False, "s": "x"}, {"b": None, "s": None}],
    "all_null_column": [{"q": "a", "nothing": None}, {"q": "b", "nothing": None}],
    "empty_objects_and_lists": [{"m": {}, "l": []}, {"m": {}, "l": []}],
    "big_integers": [{"n": 12345678901234567}, {"n": -1}],
    "numeric_strings_stay_strings": [{"s": "1", "t": "001"}, {"s": "2.5", "t": "1e5"}],
}


@pytest.mark.parametrize("case", sorted(JSON_CASES))
@pytest.mark.parametrize("extension", ["jsonl", "json"])
def test_json_rows_equal_datasets_rows(case: str, extension: str, tmp_path: Path) -> None:
    rows = JSON_CASES[case]
    path = tmp_path / "data" / "org/ds/default" / f"validation.{extension}"
    (write_jsonl if extension == "jsonl" else write_json_array)(path, rows)
    assert_same_rows(local_rows(tmp_path / "data"), hf_rows(path, "json", tmp_path / "cache"))


def test_int_float_mixing_is_promoted_like_arrow(tmp_path: Path) -> None:
    """Hand-written expectation of what both loaders must give (ints become floats)."""
    path = write_jsonl(
        tmp_path / "data/org/ds/default/validation.jsonl",
        [{"n": 1, "l": [1, 2.5], "m": {"v": 2}}, {"n": 2.5, "l": [3], "m": {"v": 0.5}}],
    )
    expected = [
        {"n": 1.0, "l": [1.0, 2.5], "m": {"v": 2.0}},
        {"n": 2.5, "l": [3.0], "m": {"v": 0.5}},
    ]
    assert_same_rows(local_rows(tmp_path / "data"), expected)
    assert_same_rows(hf_rows(path, "json", tmp_path / "cache"), expected)


def test_missing_keys_become_none_in_first_seen_order(tmp_path: Path) -> None:
    write_jsonl(
        tmp_path / "data/org/ds/default/validation.jsonl",
        [{"b": 1, "a": "x"}, {"a": "y", "c": True}],
    )
    assert_same_rows(
        local_rows(tmp_path / "data"),
        [{"b": 1, "a": "x", "c": None}, {"b": None, "a": "y", "c": True}],
    )


@pytest.mark.parametrize("extension", ["jsonl", "json"])
def test_date_like_strings_equal_datasets_rows(extension: str, tmp_path: Path) -> None:
    rows = [
        {"q": "a", "date": "2020-01-01", "nested": {"when": "2021-02-03 10:00"}},
        {"q": "b", "date": "2022-12-31", "nested": {"when": "2021-02-04 11:30"}},
    ]
    path = tmp_path / "data" / "org/ds/default" / f"validation.{extension}"
    (write_jsonl if extension == "jsonl" else write_json_array)(path, rows)
    assert_same_rows(local_rows(tmp_path / "data"), hf_rows(path, "json", tmp_path / "cache"))


@pytest.mark.parametrize(
    "payload",
    [{"q": ["a", "b"], "n": [1, 2]}, {"q": "only", "n": 1}],
    ids=["object_of_columns", "single_object"],
)
def test_json_object_file_equals_datasets_rows(payload: Row, tmp_path: Path) -> None:
    path = tmp_path / "data/org/ds/default/validation.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(payload), encoding="utf-8")
    assert_same_rows(local_rows(tmp_path / "data"), hf_rows(path, "json", tmp_path / "cache"))


def test_jsonl_blank_lines_are_skipped_like_datasets(tmp_path: Path) -> None:
    path = tmp_path / "data/org/ds/default/validation.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text('{"q": "a"}\n\n   \n{"q": "b"}\n', encoding="utf-8")
    ours = local_rows(tmp_path / "data")
    assert ours == [{"q": "a"}, {"q": "b"}]
    assert_same_rows(ours, hf_rows(path, "json", tmp_path / "cache"))


def test_invalid_jsonl_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "data/org/ds/default/validation.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text('{"q": "a"}\n{"q": "b"}\n{"q": oops}\n', encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        local_rows(tmp_path / "data")
    assert f"{path}:3" in str(info.value)


def test_csv_rows_equal_datasets_rows(tmp_path: Path) -> None:
    path = tmp_path / "data/org/ds/default/validation.csv"
    path.parent.mkdir(parents=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "n", "score", "maybe", "flag", "text"])
        writer.writerow(["hello, world", 1, 1.5, "", "True", 'quote "inside"'])
        writer.writerow(["日本語 ✓", 2, "", "x", "False", "line1\nline2"])
        writer.writerow(["plain", 3, 2, "NA", "True", "é"])
    ours = local_rows(tmp_path / "data")
    assert_same_rows(ours, hf_rows(path, "csv", tmp_path / "cache"))
    # hand-written: ints stay ints, a column with a blank becomes float, blanks and NA are None
    assert ours[0] == {
        "question": "hello, world",
        "n": 1,
        "score": 1.5,
        "maybe": None,
        "flag": True,
        "text": 'quote "inside"',
    }
    assert ours[1]["score"] is None
    assert ours[1]["text"] == "line1\nline2"
    assert ours[2]["maybe"] is None
    assert type(ours[2]["score"]) is float


def test_parquet_rows_equal_datasets_rows(tmp_path: Path) -> None:
    path = tmp_path / "data/org/ds/default/validation.parquet"
    path.parent.mkdir(parents=True)
    table = pa.Table.from_pylist(
        [
            {"q": "a", "choices": ["x", "y"], "meta": {"k": 1, "s": "é"}, "gold": 0},
            {"q": None, "choices": [], "meta": {"k": 2, "s": None}, "gold": 1},
        ]
    )
    pq.write_table(table, path)
    ours = local_rows(tmp_path / "data")
    assert_same_rows(ours, hf_rows(path, "parquet", tmp_path / "cache"))
    assert ours[1] == {"q": None, "choices": [], "meta": {"k": 2, "s": None}, "gold": 1}


def test_each_call_returns_fresh_rows(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "data/org/ds/default/validation.jsonl", [{"q": "a", "l": [1]}])
    source = RowSource("t", "org/ds", "default", data_dir=tmp_path / "data")
    first = source.rows("validation")
    first[0]["q"] = "changed"
    first[0]["l"].append(2)
    assert source.rows("validation") == [{"q": "a", "l": [1]}]


# --- what the prompt function sees -----------------------------------------------------------


def test_prompt_function_sees_few_shot_flag_and_index(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_jsonl(data / "org/ds/default/validation.jsonl", [{"q": "e0"}, {"q": "e1"}])
    write_jsonl(data / "org/ds/default/train.jsonl", [{"q": "t0"}, {"q": "t1"}, {"q": "t2"}])
    seen: list[Row] = []
    task = Task(make_config(recording_prompt(seen), num_fewshots=1), data_dir=data)
    docs = task.get_docs()
    assert sorted(doc.id for doc in docs) == ["0", "1"]
    eval_rows = [row for row in seen if row["__few_shots"] is False]
    pool_rows = [row for row in seen if row["__few_shots"] is True]
    assert eval_rows == [
        {"q": "e0", "__few_shots": False, "__index": 0},
        {"q": "e1", "__few_shots": False, "__index": 1},
    ]
    assert pool_rows == [
        {"q": "t0", "__few_shots": True, "__index": 0},
        {"q": "t1", "__few_shots": True, "__index": 1},
        {"q": "t2", "__few_shots": True, "__index": 2},
    ]
    assert [list(row) for row in eval_rows] == [["q", "__few_shots", "__index"]] * 2


def test_indices_restart_for_each_evaluation_split(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_jsonl(data / "org/ds/default/validation.jsonl", [{"q": "v0"}, {"q": "v1"}])
    write_jsonl(data / "org/ds/default/test.jsonl", [{"q": "t0"}])
    seen: list[Row] = []
    task = Task(
        make_config(recording_prompt(seen), evaluation_splits=["validation", "test"]),
        data_dir=data,
    )
    docs = task.eval_docs()
    assert [(doc.query, doc.id) for doc in docs] == [("v0", "0"), ("v1", "1"), ("t0", "0")]
    assert [row["__index"] for row in seen] == [0, 1, 0]


def test_hf_filter_runs_after_loading_and_indices_count_after_filtering(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_jsonl(
        data / "org/ds/default/validation.jsonl",
        [{"q": f"r{i}", "keep": i % 2 == 1, "n": i if i != 3 else 3.5} for i in range(6)],
    )
    filter_saw: list[Row] = []

    def keep(row: Row) -> bool:
        filter_saw.append(dict(row))
        return bool(row["keep"])

    seen: list[Row] = []
    task = Task(make_config(recording_prompt(seen), hf_filter=keep), data_dir=data)
    docs = task.eval_docs()
    assert [(doc.query, doc.id) for doc in docs] == [("r1", "0"), ("r3", "1"), ("r5", "2")]
    assert [(row["q"], row["__index"]) for row in seen] == [("r1", 0), ("r3", 1), ("r5", 2)]
    # the filter saw loaded (normalised) rows, before the runtime keys were added
    assert len(filter_saw) == 6
    assert all("__index" not in row and "__few_shots" not in row for row in filter_saw)
    assert [type(row["n"]) for row in filter_saw] == [float] * 6


def test_prompt_returning_none_drops_the_row_but_uses_its_index(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_jsonl(data / "org/ds/default/validation.jsonl", [{"q": f"r{i}"} for i in range(4)])

    def prompt(row: Row, task_name: str) -> Doc | None:
        if row["q"] == "r1":
            return None
        if row["q"] == "r2":
            return []  # type: ignore[return-value]
        return Doc(query=row["q"], choices=["x"], gold_index=0)

    docs = Task(make_config(prompt), data_dir=data).eval_docs()
    assert [(doc.query, doc.id) for doc in docs] == [("r0", "0"), ("r3", "3")]


def test_empty_subset_reads_the_default_directory(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_jsonl(data / "org/ds/default/validation.jsonl", [{"q": "from default"}])
    docs = Task(make_config(recording_prompt([]), hf_subset=""), data_dir=data).eval_docs()
    assert [doc.query for doc in docs] == ["from default"]


def test_subset_directory_is_used(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_jsonl(data / "org/ds/default/validation.jsonl", [{"q": "wrong"}])
    write_jsonl(data / "org/ds/sub_a/validation.jsonl", [{"q": "right"}])
    docs = Task(make_config(recording_prompt([]), hf_subset="sub_a"), data_dir=data).eval_docs()
    assert [doc.query for doc in docs] == ["right"]


def test_hf_data_files_are_relative_to_the_local_dataset_directory(tmp_path: Path) -> None:
    data = tmp_path / "data"
    base = data / "org/ds/default"
    write_jsonl(base / "raw/eval_part2.jsonl", [{"q": "p2"}])
    write_jsonl(base / "raw/eval_part1.jsonl", [{"q": "p1a"}, {"q": "p1b"}])
    write_jsonl(base / "raw/shots.jsonl", [{"q": "shot"}])
    write_jsonl(base / "validation.jsonl", [{"q": "must not be read"}])
    config = make_config(
        recording_prompt([]),
        hf_data_files={"validation": "raw/eval_*.jsonl", "train": ["raw/shots.jsonl"]},
        num_fewshots=1,
        few_shots_select="sequential",
    )
    task = Task(config, data_dir=data)
    assert [doc.query for doc in task.eval_docs()] == ["p1a", "p1b", "p2"]
    assert [doc.query for doc in task.fewshot_docs()] == ["shot"]


def test_hf_data_files_without_the_split_is_an_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_jsonl(data / "org/ds/default/raw/a.jsonl", [{"q": "a"}])
    config = make_config(recording_prompt([]), hf_data_files={"train": "raw/a.jsonl"})
    with pytest.raises(DatasetError) as info:
        Task(config, data_dir=data).eval_docs()
    message = str(info.value)
    assert "'rows_task'" in message
    assert "'validation'" in message
    assert "train" in message


def test_hf_data_files_pattern_matching_nothing_is_an_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "org/ds/default").mkdir(parents=True)
    config = make_config(recording_prompt([]), hf_data_files={"validation": "raw/*.jsonl"})
    with pytest.raises(DatasetError, match=r"raw/\*\.jsonl"):
        Task(config, data_dir=data).eval_docs()


# --- local directory is the only source ------------------------------------------------------


@pytest.fixture
def no_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail loudly if anything falls back to the Hub."""

    def refuse(source: RowSource) -> Any:
        raise AssertionError(f"fell back to the Hub for {source.hf_repo}")

    monkeypatch.setattr(rows_module, "load_hub_dataset", refuse)


@pytest.mark.usefixtures("no_hub")
def test_missing_split_in_local_directory_is_an_error_not_a_hub_fallback(tmp_path: Path) -> None:
    data = tmp_path / "data"
    directory = data / "org/ds/default"
    write_jsonl(directory / "train.jsonl", [{"q": "a"}])
    write_jsonl(directory / "test.jsonl", [{"q": "b"}])
    with pytest.raises(DatasetError) as info:
        Task(make_config(recording_prompt([])), data_dir=data).eval_docs()
    message = str(info.value)
    assert "'rows_task'" in message  # the task
    assert "'validation'" in message  # what was looked for
    assert ".jsonl" in message and ".parquet" in message  # the file names tried
    assert str(directory) in message  # where
    assert "test, train" in message  # which splits exist


@pytest.mark.usefixtures("no_hub")
def test_zero_shot_task_never_loads_its_few_shot_split(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_jsonl(data / "org/ds/default/validation.jsonl", [{"q": "only eval"}])
    seen: list[Row] = []
    task = Task(make_config(recording_prompt(seen), num_fewshots=0), data_dir=data)
    docs = task.get_docs()
    assert [doc.fewshot_samples for doc in docs] == [[]]
    assert all(row["__few_shots"] is False for row in seen)
    with pytest.raises(DatasetError, match="'train'"):
        Task(make_config(recording_prompt([]), num_fewshots=1), data_dir=data).get_docs()


# --- the Hub path, offline, through `datasets` -----------------------------------------------

HUB_ROWS = {
    "validation": [
        {"q": "a", "n": 1, "tags": [1, 2.5], "meta": {"k": 1, "s": "é"}, "opt": None},
        {"q": "b ✓", "n": 2.5, "tags": [], "meta": {"k": 2.5, "s": "x"}, "opt": "here"},
        {"q": "c", "n": 3, "tags": [4], "meta": {"k": 3, "s": "日本"}},
    ],
    "train": [
        {"q": "t", "n": 0.5, "tags": [0.5], "meta": {"k": 0.5, "s": "t"}, "opt": "x"},
    ],
}


@pytest.fixture
def offline_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Offline mode and a private cache for `datasets`, whenever it was imported."""
    import huggingface_hub.constants

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf_cache")


@pytest.mark.usefixtures("offline_hub")
def test_hub_path_gives_the_prompt_function_the_same_rows_as_the_data_root(
    tmp_path: Path,
) -> None:
    hub_dir = tmp_path / "hub_copy" / "ds"
    data = tmp_path / "data"
    for split, rows in HUB_ROWS.items():
        write_jsonl(hub_dir / f"{split}.jsonl", rows)
        write_jsonl(data / "org/ds/default" / f"{split}.jsonl", rows)

    through_root: list[Row] = []
    Task(make_config(recording_prompt(through_root), num_fewshots=1), data_dir=data).get_docs()
    through_hub: list[Row] = []
    hub_task = Task(
        make_config(recording_prompt(through_hub), hf_repo=str(hub_dir), num_fewshots=1),
        data_dir=data,
    )
    assert hub_task.source.local_dir is None
    hub_task.get_docs()

    assert len(through_root) == 4
    assert_same_rows(through_hub, through_root)
    assert through_root[0] == {
        "q": "a",
        "n": 1.0,
        "tags": [1.0, 2.5],
        "meta": {"k": 1.0, "s": "é"},
        "opt": None,
        "__few_shots": False,
        "__index": 0,
    }


@pytest.mark.usefixtures("offline_hub")
def test_hub_path_applies_hf_filter(tmp_path: Path) -> None:
    hub_dir = tmp_path / "hub_copy"
    for split, rows in HUB_ROWS.items():
        write_jsonl(hub_dir / f"{split}.jsonl", rows)
    seen: list[Row] = []
    config = make_config(
        recording_prompt(seen), hf_repo=str(hub_dir), hf_filter=lambda row: row["q"] != "a"
    )
    docs = Task(config, data_dir=None).eval_docs()
    assert [(doc.query, doc.id) for doc in docs] == [("b ✓", "0"), ("c", "1")]


@pytest.mark.usefixtures("offline_hub")
def test_hub_missing_split_names_task_split_and_existing_splits(tmp_path: Path) -> None:
    hub_dir = tmp_path / "hub_copy"
    for split, rows in HUB_ROWS.items():
        write_jsonl(hub_dir / f"{split}.jsonl", rows)
    config = make_config(recording_prompt([]), hf_repo=str(hub_dir), evaluation_splits=["test"])
    with pytest.raises(DatasetError) as info:
        Task(config).eval_docs()
    message = str(info.value)
    assert "'rows_task'" in message
    assert "'test'" in message
    assert str(hub_dir) in message
    assert "train" in message and "validation" in message


@pytest.mark.usefixtures("offline_hub")
def test_missing_dataset_names_task_dataset_and_local_path(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    config = make_config(recording_prompt([]), hf_repo="no-such-org-zz/no-such-dataset-zz")
    with pytest.raises(DatasetError) as info:
        Task(config, data_dir=data).eval_docs()
    message = str(info.value)
    assert "'rows_task'" in message
    assert "no-such-org-zz/no-such-dataset-zz" in message
    assert str(data / "no-such-org-zz/no-such-dataset-zz/default") in message
    assert "offline" in message
    assert isinstance(info.value.__cause__, Exception)


def test_datasets_is_not_imported_for_local_data(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_jsonl(
        data / "org/ds/default/validation.jsonl", [{"q": "a", "n": 1}, {"q": "b", "n": 2.5}]
    )
    write_jsonl(data / "org/ds/default/train.jsonl", [{"q": "t", "n": 1}])
    pq.write_table(pa.Table.from_pylist([{"q": "p"}]), data / "org/ds/default/test.parquet")
    script = textwrap.dedent(
        f"""
        import sys
        from pytest_evaltasks import Doc, Task, TaskConfig, render_plain

        def prompt(row, task_name):
            return Doc(query=row["q"], choices=[" x"], gold_index=0)

        config = TaskConfig(
            name="t", prompt_function=prompt, hf_repo="org/ds", hf_subset="default",
            metrics=[], num_fewshots=1, evaluation_splits=["validation", "test"],
        )
        docs = Task(config, data_dir={str(data)!r}).get_docs()
        print(len(docs), render_plain(docs[0]) != "")
        print("datasets" in sys.modules)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["3", "True", "False"]


# --- real benchmark rows (skipped without ../shared/realdata) ---------------------------------


def realdata_dir() -> Path:
    shared = os.environ.get("EVALTASKS_SHARED_DIR")
    base = Path(shared) if shared else Path(__file__).resolve().parents[2] / "shared"
    return base / "realdata"


REALDATA = realdata_dir()
REAL_FILES = [
    "lighteval/mmlu/anatomy/validation.jsonl",
    "lighteval/mmlu/abstract_algebra/dev.jsonl",
    "allenai/ai2_arc/ARC-Easy/validation.jsonl",
    "google/IFEval/default/train.jsonl",
    "truthfulqa/truthful_qa/multiple_choice/validation.jsonl",
    "Rowan/hellaswag/default/validation.jsonl",
]


@pytest.mark.realdata
@pytest.mark.skipif(not REALDATA.is_dir(), reason=f"{REALDATA} not found")
@pytest.mark.parametrize("relative", REAL_FILES)
def test_real_rows_equal_datasets_rows(relative: str, tmp_path: Path) -> None:
    path = REALDATA / relative
    if not path.is_file():
        pytest.skip(f"{path} not found")
    repo_subset, split = str(Path(relative).parent), Path(relative).stem
    repo, subset = repo_subset.rsplit("/", 1)
    ours = RowSource("real", repo, subset, data_dir=REALDATA).rows(split)
    assert len(ours) > 0
    assert_same_rows(ours, hf_rows(path, "json", tmp_path / "cache"))


@pytest.mark.realdata
@pytest.mark.skipif(not REALDATA.is_dir(), reason=f"{REALDATA} not found")
def test_real_mmlu_rows_have_the_hub_schema() -> None:
    path = REALDATA / "lighteval/mmlu/anatomy/validation.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    rows = RowSource("real", "lighteval/mmlu", "anatomy", data_dir=REALDATA).rows("validation")
    assert len(rows) == 14
    for row in rows:
        assert list(row) == ["question", "subject", "choices", "answer"]
        assert row["subject"] == "anatomy"
        assert len(row["choices"]) == 4
        assert type(row["answer"]) is int and 0 <= row["answer"] <= 3


@pytest.mark.parametrize(
    "value",
    ["2020-01-01T10", "2020-01-01T10:30Z", "2020-01-01 10:30:00+02:00", "2020-01-01T23:00-0130",
     "2020-01-01T10:30:00.5", "2020-01", "20200101", "2020-01-01 and more"],
)  # fmt: skip
def test_timestamp_forms_equal_datasets_rows(value: str, tmp_path: Path) -> None:
    rows = [{"q": "a", "when": value}, {"q": "b", "when": None}]
    path = tmp_path / "data" / "org/ds/default" / "validation.jsonl"
    write_jsonl(path, rows)
    assert_same_rows(local_rows(tmp_path / "data"), hf_rows(path, "json", tmp_path / "cache"))


# --- the reader agrees with `datasets`, or fails as clearly ------------------------------------

READ_LIKE_DATASETS = {
    "invalid-date": '{"d": "2021-02-30"}\n{"d": "2021-01-01"}\n',
    "hour-24": '{"d": "2021-01-01T24:00:00"}\n',
    "list-of-dates": '{"d": ["2021-01-01", "2021-02-03"]}\n{"d": ["2022-05-06"]}\n',
    "date-with-z": '{"d": "2021-01-01Z"}\n',
    "bom": '\ufeff{"a": 1}\n{"a": 2}\n',
    "int-beyond-int64": '{"a": 99999999999999999999}\n{"a": 1}\n',
    "valid-surrogate-pair": '{"a": "smile \\ud83d\\ude00"}\n',
}


@pytest.mark.parametrize("text", READ_LIKE_DATASETS.values(), ids=READ_LIKE_DATASETS.keys())
def test_odd_json_lines_read_as_datasets_reads_them(text: str, tmp_path: Path) -> None:
    path = tmp_path / "data" / "org/ds/default" / "validation.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    assert_same_rows(local_rows(tmp_path / "data"), hf_rows(path, "json", tmp_path / "cache"))


def test_a_json_file_holding_json_lines_reads_as_datasets_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "data" / "org/ds/default" / "validation.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"a": 1, "b": "x"}\n{"a": 2, "b": "y"}\n', encoding="utf-8")
    assert_same_rows(local_rows(tmp_path / "data"), hf_rows(path, "json", tmp_path / "cache"))


REFUSED_LIKE_DATASETS = {
    "two-objects-on-a-line": (
        '{"a": 1}\n{"a": 1}, {"a": 2}\n',
        ":2:",
        "two JSON values on one line",
    ),
    "duplicate-key": ('{"a": 1}\n{"a": 1, "a": 2}\n', ":2:", "key 'a' appears twice"),
    "lone-surrogate": ('{"a": "ok"}\n{"a": "x\\ud800y"}\n', ":2:", "lone surrogate"),
    "bad-line": ('{"a": 1}\n{"a": 1}\n{"a": oops}\n', ":3:7:", "invalid JSON Lines"),
    # A value spread over two lines beside a line of two values: as many rows as lines, once
    # the lines are joined, but not one row per line.
    "spread-and-two-on-a-line": (
        '{"a": [{"b": 1}\n{"c": 2}]}\n{"x": 1}, {"y": 2}\n',
        ":1:",
        "invalid JSON Lines",
    ),
    "spread-and-bracketed-pair": ('{"a": [[1\n2]]}\n{"x": 1}],[{"y": 2}\n', ":1:", "invalid"),
    "unicode-space-after-the-object": ('{"a": 1}\u00a0\n', ":1:", "two JSON values on one line"),
}


@pytest.mark.parametrize(
    ("text", "where", "what"), REFUSED_LIKE_DATASETS.values(), ids=REFUSED_LIKE_DATASETS.keys()
)
def test_what_datasets_refuses_is_an_error_naming_file_and_line(
    text: str, where: str, what: str, tmp_path: Path
) -> None:
    path = tmp_path / "data" / "org/ds/default" / "validation.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(Exception):  # noqa: B017 - datasets' own error types vary
        hf_rows(path, "json", tmp_path / "cache")
    with pytest.raises(DatasetError) as info:
        local_rows(tmp_path / "data")
    message = str(info.value)
    assert f"{path}{where}" in message and what in message
    assert "line 1 column" not in message  # no internal position of the joined text


@pytest.mark.parametrize("chunk", [1, 7, 40, 1 << 21])
def test_json_lines_read_in_chunks_give_the_rows_and_errors_of_one_reading(
    chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large `.jsonl` file is parsed a chunk of lines at a time: the rows, their typing
    (which looks at whole columns) and the line an error names do not depend on where the
    chunks end."""
    from pytest_evaltasks.engine import local_files

    monkeypatch.setattr(local_files, "CHUNK_CHARS", chunk)
    lines = [json.dumps({"q": f"row {i}", "n": i if i % 5 else i + 0.5}) for i in range(30)]
    text = "\ufeff\n" + "\n".join(lines[:12]) + "\n  \n" + "\n".join(lines[12:]) + "\n\n"
    path = tmp_path / "data" / "org/ds/default" / "validation.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    rows = local_rows(tmp_path / "data")
    assert rows == [json.loads(line) for line in lines]
    assert {type(row["n"]) for row in rows} == {float}  # ints promoted across every chunk
    bad = text.replace(lines[20], '{"q": "x\\ud800"}').replace(lines[25], '{"q": oops}')
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(DatasetError, match=":28:7: invalid JSON Lines"):  # before the surrogate
        local_rows(tmp_path / "data")
    path.write_text(bad.replace('{"q": oops}', lines[25]), encoding="utf-8")
    with pytest.raises(DatasetError, match=":23: the row holds a lone surrogate"):
        local_rows(tmp_path / "data")


def test_an_empty_split_file_says_so(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "org/ds/default").mkdir(parents=True)
    (data / "org/ds/default/validation.jsonl").write_text("", encoding="utf-8")
    config = make_config(recording_prompt([]))
    with pytest.raises(EvalTaskError, match=r"validation at .* are empty") as info:
        Task(config, data_dir=data).get_docs()
    assert "dropped by its prompt function" not in str(info.value)


def test_a_split_that_is_a_directory_or_a_broken_link_is_named(tmp_path: Path) -> None:
    data = tmp_path / "data"
    folder = data / "org/ds/default"
    write_jsonl(folder / "train.jsonl", [{"q": "a"}])
    (folder / "validation.parquet").mkdir()
    (folder / "validation.parquet" / "part-0.parquet").write_bytes(b"")
    (folder / "validation.jsonl").symlink_to(folder / "gone.jsonl")
    with pytest.raises(DatasetError) as info:
        local_rows(data)
    message = str(info.value)
    assert "split 'validation' not found" in message
    assert "validation.parquet is a directory" in message
    assert "validation.jsonl is a broken symbolic link" in message
    assert "splits there: train." in message  # not the directory, not the broken link


def test_a_split_in_two_files_is_an_error_naming_both(tmp_path: Path) -> None:
    data = tmp_path / "data"
    jsonl = write_jsonl(data / "org/ds/default/validation.jsonl", [{"q": "new"}])
    parquet = data / "org/ds/default/validation.parquet"
    pq.write_table(pa.Table.from_pylist([{"q": "stale"}]), parquet)
    with pytest.raises(DatasetError) as info:
        local_rows(data)
    assert str(jsonl) in str(info.value) and str(parquet) in str(info.value)


def test_an_unreadable_data_file_or_folder_is_a_data_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """chmod does not stop root (CI runs as root), so the refusal itself is simulated."""
    path = write_jsonl(tmp_path / "data/org/ds/default/validation.jsonl", [{"q": "a"}])
    real_read_text, real_open = Path.read_text, Path.open

    def refuse(self: Path, *args: Any, **kwargs: Any) -> str:
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real_read_text(self, *args, **kwargs)

    def refuse_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", refuse)
    monkeypatch.setattr(Path, "open", refuse_open)
    with pytest.raises(DatasetError, match="permission denied; make the file readable"):
        local_rows(tmp_path / "data")
    monkeypatch.undo()
    path.unlink()
    real_iterdir = Path.iterdir

    def refuse_listing(self: Path) -> Any:
        if self == path.parent:
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", refuse_listing)
    with pytest.raises(DatasetError, match="permission denied; make the folder readable"):
        local_rows(tmp_path / "data")


def test_an_absolute_hf_data_files_path_is_accepted_as_datasets_accepts_it(tmp_path: Path) -> None:
    outside = write_jsonl(tmp_path / "elsewhere" / "rows.jsonl", [{"q": "far"}])
    (tmp_path / "data/org/ds/default").mkdir(parents=True)
    source = RowSource(
        "t",
        "org/ds",
        "default",
        hf_data_files={"validation": str(outside)},
        data_dir=tmp_path / "data",
    )
    assert source.rows("validation") == [{"q": "far"}]


def test_without_network_the_hub_path_fails_at_once_naming_the_local_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.setattr(rows_module, "hub_reachable", lambda: False)
    called: list[str] = []
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: called.append("load"))
    data = tmp_path / "data"
    data.mkdir()
    source = RowSource("t", "org/missing", "main", data_dir=data)
    with pytest.raises(DatasetError) as info:
        source.rows("test")
    message = str(info.value)
    assert str(data / "org/missing/main") in message and "cannot be reached" in message
    assert called == []


def test_library_and_plugin_share_the_default_data_root(tmp_path: Path) -> None:
    from pytest_evaltasks import Registry

    (tmp_path / "tasks").mkdir()
    assert Registry([tmp_path / "tasks"]).data_dir == tmp_path / "tasks" / "data"
