"""Where an Inspect task's files come from while it is built (`inspect_data`): URL files from
their local copy in the data root, through the calls Inspect's own loaders make (`file()` for
`csv_dataset`/`json_dataset`, `download()` for checksummed files); else fetched, and kept for
`--evaltasks-save-data`. Tested in-process, with `httpx` replaced by a stand-in server."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_evals")

import datasets
import inspect_ai._util.download as inspect_download
import inspect_ai._util.file as inspect_files
from inspect_ai.dataset import json_dataset
from inspect_ai.util import download

from pytest_evaltasks.engine.inspect_data import Fetched, is_remote, task_data, url_copy
from pytest_evaltasks.errors import DatasetError

URL = "https://files.example/quiz/rows.jsonl"
ROWS = b'{"input": "What is up?", "target": "sky"}\n{"input": "Down?", "target": "floor"}\n'


class Server:
    """`httpx` as `download()` uses it, answering `bodies` (a missing URL: a refused
    connection), counting the requests it was sent."""

    def __init__(self, bodies: dict[str, bytes]) -> None:
        self.bodies = bodies
        self.asked: list[str] = []

    def get(self, url: str, **kwargs: Any) -> Any:
        self.asked.append(url)
        if url not in self.bodies:
            raise ConnectionError(f"cannot reach {url}")
        body = self.bodies[url]
        return type("Response", (), {"content": body, "raise_for_status": lambda self: None})()

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("download() is answered by the stand-in, not the real stream")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Server:
    served = Server({})
    monkeypatch.setattr(inspect_download, "httpx", served)
    return served


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_url_copy_is_the_urls_host_and_path_inside_the_data_root(tmp_path: Path) -> None:
    assert url_copy(tmp_path, URL) == tmp_path / "files.example" / "quiz" / "rows.jsonl"
    assert url_copy(tmp_path, "s3://bucket/a/b.csv") == tmp_path / "bucket" / "a" / "b.csv"
    query = url_copy(tmp_path, "https://h.example/get?id=1&x=a/b")
    assert query == tmp_path / "h.example" / "get%3Fid%3D1%26x%3Da%2Fb"
    assert url_copy(tmp_path, "https://h.example/a/../../escape.csv") is None
    assert url_copy(tmp_path, "https://h.example/") is None
    assert url_copy(None, URL) is None
    assert is_remote(URL) and is_remote("hf://datasets/x/y.csv")
    assert not is_remote("/tmp/x.csv") and not is_remote("file:///tmp/x.csv")
    assert not is_remote("C://data/x.csv")


def test_download_reads_the_local_copy_and_records_it(tmp_path: Path, server: Server) -> None:
    copy = url_copy(tmp_path / "data", URL)
    assert copy is not None
    copy.parent.mkdir(parents=True)
    copy.write_bytes(ROWS)
    read: list[str] = []
    with task_data(tmp_path / "data", read, None):
        landed = download(URL, sha(ROWS), tmp_path / "cache" / "rows.jsonl")
    assert landed.read_bytes() == ROWS
    assert read == [str(copy)] and server.asked == []


def test_a_file_read_by_url_comes_from_its_local_copy(tmp_path: Path, server: Server) -> None:
    copy = url_copy(tmp_path, URL)
    assert copy is not None
    copy.parent.mkdir(parents=True)
    copy.write_bytes(ROWS)
    read: list[str] = []
    with task_data(tmp_path, read, None):
        samples = list(json_dataset(URL))
    assert [sample.target for sample in samples] == ["sky", "floor"]
    assert read == [str(copy)]


def test_without_a_copy_a_failed_fetch_says_where_the_copy_goes(
    tmp_path: Path, server: Server
) -> None:
    with pytest.raises(DatasetError) as raised, task_data(tmp_path, [], None):
        download(URL, sha(ROWS), tmp_path / "cache" / "rows.jsonl")
    message = str(raised.value)
    assert f"no local copy of {URL} at {tmp_path / 'files.example/quiz/rows.jsonl'}" in message
    assert "ConnectionError: cannot reach" in message and "--evaltasks-save-data" in message
    assert server.asked == [URL]


def test_saving_keeps_each_fetched_file_whole_and_reads_no_copy(
    tmp_path: Path, server: Server
) -> None:
    copy = url_copy(tmp_path, URL)
    assert copy is not None
    copy.parent.mkdir(parents=True)
    copy.write_bytes(b"an older copy\n")  # what is being replaced: not read
    server.bodies[URL] = ROWS
    fetched = Fetched(tmp_path, "quiz")
    with task_data(tmp_path, [], fetched):
        download(URL, sha(ROWS), tmp_path / "cache" / "rows.jsonl")
    (prepared,) = fetched.prepared(1)
    assert prepared.url == URL and prepared.directory == copy.parent
    assert prepared.files == {"rows.jsonl": ROWS} and prepared.rows == {"rows.jsonl": 2}


def test_saving_a_split_expression_is_refused_naming_the_task(tmp_path: Path) -> None:
    fetched = Fetched(tmp_path, "quiz")
    with pytest.raises(DatasetError, match=r"task 'quiz': dataset 'me/quiz' is read as split"):
        fetched.add_dataset("me/quiz", None, {"split": "train[:10]"}, object())
    with pytest.raises(DatasetError, match=r"names no folder inside the data root"):
        fetched.add_dataset("../outside", None, {"split": "train"}, object())
    streamed = datasets.Dataset.from_list([{"q": "a"}]).to_iterable_dataset()
    with pytest.raises(DatasetError, match=r"split 'train' is read as a IterableDataset"):
        fetched.add_dataset("me/quiz", None, {"split": "train"}, streamed)
    assert fetched.datasets == {}


def test_what_a_build_replaces_is_restored(tmp_path: Path, server: Server) -> None:
    before = (datasets.load_dataset, inspect_files.fsspec, inspect_download.httpx)
    with pytest.raises(DatasetError), task_data(tmp_path, [], None):
        download(URL, sha(ROWS), tmp_path / "cache" / "rows.jsonl")
    assert (datasets.load_dataset, inspect_files.fsspec, inspect_download.httpx) == before
