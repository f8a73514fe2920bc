"""Where an Inspect task's files come from while it is built (`sources/inspect/data`): URL files
from their local copy in the data root, through the calls Inspect's own loaders make (`file()` for
`csv_dataset`/`json_dataset`, `download()` for checksummed files); else fetched, and kept for
`--evaltasks-save-data`. Tested in-process, with `httpx` replaced by a stand-in server."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, ClassVar

import pytest

pytest.importorskip("inspect_evals")

import datasets
import huggingface_hub
import inspect_ai._util.download as inspect_download
import inspect_ai._util.file as inspect_files
from inspect_ai.dataset import json_dataset
from inspect_ai.util import download
from inspect_evals.utils import huggingface as evals_hub

from pytest_evaltasks.errors import DatasetError
from pytest_evaltasks.sources.inspect.data import (
    PRIVATE_CACHE_NAME,
    Fetched,
    is_remote,
    stable_paths,
    task_data,
    url_copy,
)

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


def local_copy(data_root: Path, data: bytes) -> Path:
    """URL's local copy in the data root, holding `data`."""
    copy = url_copy(data_root, URL)
    assert copy is not None
    copy.parent.mkdir(parents=True)
    copy.write_bytes(data)
    return copy


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
    copy = local_copy(tmp_path / "data", ROWS)
    read: list[str] = []
    with task_data(tmp_path / "data", read, None):
        landed = download(URL, sha(ROWS), tmp_path / "cache" / "rows.jsonl")
    assert landed.read_bytes() == ROWS
    assert read == [str(copy)] and server.asked == []


def test_a_file_read_by_url_comes_from_its_local_copy(tmp_path: Path, server: Server) -> None:
    copy = local_copy(tmp_path, ROWS)
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
    copy = local_copy(tmp_path, b"an older copy\n")  # what is being replaced: not read
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


class Hub:
    """`huggingface_hub`'s downloads answering from `repos` ({repo: {path: bytes}}; a missing
    repository: unreachable), counting what they were asked."""

    def __init__(self, repos: dict[str, dict[str, bytes]]) -> None:
        self.repos = repos
        self.asked: list[str] = []

    def files(self, repo_id: str) -> dict[str, bytes]:
        self.asked.append(repo_id)
        if repo_id not in self.repos:
            raise ConnectionError(f"cannot reach the Hub for {repo_id}")
        return self.repos[repo_id]

    def hf_hub_download(self, repo_id: str, filename: str, **kwargs: Any) -> str:
        path = f"{kwargs['subfolder']}/{filename}" if kwargs.get("subfolder") else filename
        placed = Path(kwargs["local_dir"], path)
        placed.parent.mkdir(parents=True, exist_ok=True)
        placed.write_bytes(self.files(repo_id)[path])
        return str(placed)

    def snapshot_download(self, repo_id: str, **kwargs: Any) -> str:
        for path, data in self.files(repo_id).items():
            placed = Path(kwargs["local_dir"], path)
            placed.parent.mkdir(parents=True, exist_ok=True)
            placed.write_bytes(data)
        return str(kwargs["local_dir"])


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Hub:
    served = Hub({})
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", served.hf_hub_download)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", served.snapshot_download)
    return served


REPO_FILES = {"README.md": b"# quiz\n", "images/1.png": b"PNG1", "data/test.json": b"[]\n"}


def hub_copy(data_root: Path, repo: str, files: dict[str, bytes]) -> Path:
    """A dataset repository's local copy, where the data root keeps it."""
    folder = data_root / "datasets" / repo
    for path, data in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    return folder


def test_hub_files_come_from_the_repositorys_copy_in_the_data_root(
    tmp_path: Path, hub: Hub
) -> None:
    copy = hub_copy(tmp_path / "data", "me/quiz", REPO_FILES)
    read: list[str] = []
    with task_data(tmp_path / "data", read, None):
        one = evals_hub.hf_hub_download(
            "me/quiz", "1.png", subfolder="images", repo_type="dataset", revision="abc"
        )
        folder = evals_hub.snapshot_download(
            repo_id="me/quiz",
            repo_type="dataset",
            revision="abc",
            local_dir=tmp_path / "wanted",
            allow_patterns=["*.png", "*.json"],
        )
        everything = huggingface_hub.snapshot_download("me/quiz", repo_type="dataset")
    assert Path(one).read_bytes() == b"PNG1" and folder == str(tmp_path / "wanted")
    placed = sorted(p.relative_to(folder).as_posix() for p in Path(folder).rglob("*.*"))
    assert placed == ["data/test.json", "images/1.png"]
    assert (Path(everything) / "README.md").read_bytes() == b"# quiz\n"
    assert hub.asked == [] and str(copy / "images/1.png") in read
    # where no local_dir was asked for: a path that is the same in every process and clone
    assert stable_paths(one) == f"{PRIVATE_CACHE_NAME}/hub/datasets/me/quiz/images/1.png"
    assert stable_paths(everything) == f"{PRIVATE_CACHE_NAME}/hub/datasets/me/quiz"


def test_without_a_copy_a_failed_hub_download_says_where_the_copy_goes(
    tmp_path: Path, hub: Hub
) -> None:
    with pytest.raises(DatasetError) as raised, task_data(tmp_path, [], None):
        huggingface_hub.snapshot_download("me/quiz", repo_type="dataset", local_dir=tmp_path)
    message = str(raised.value)
    copy = tmp_path / "datasets" / "me" / "quiz"
    assert f"no local copy of hf://datasets/me/quiz/ at {copy}" in message
    assert "cannot reach the Hub" in message and "--evaltasks-save-data" in message
    missing = r"hf://datasets/me/quiz/images/1.png at "
    with pytest.raises(DatasetError, match=missing), task_data(tmp_path, [], None):
        huggingface_hub.hf_hub_download("me/quiz", "images/1.png", repo_type="dataset")


def test_saving_keeps_each_file_of_a_hub_snapshot(tmp_path: Path, hub: Hub) -> None:
    hub_copy(tmp_path, "me/quiz", {"README.md": b"an older copy\n"})  # replaced: not read
    hub.repos["me/quiz"] = REPO_FILES
    fetched = Fetched(tmp_path, "quiz")
    with task_data(tmp_path, [], fetched):
        folder = huggingface_hub.snapshot_download("me/quiz", repo_type="dataset")
    assert (Path(folder) / "README.md").read_bytes() == b"# quiz\n"
    saved = {p.url: p.files for p in fetched.prepared(1)}
    base = "hf://datasets/me/quiz/"
    assert saved == {base + path: {Path(path).name: data} for path, data in REPO_FILES.items()}
    assert {p.directory for p in fetched.prepared(1)} == {
        tmp_path / "datasets/me/quiz", tmp_path / "datasets/me/quiz/images",
        tmp_path / "datasets/me/quiz/data",
    }  # fmt: skip


def test_what_a_build_replaces_is_restored(tmp_path: Path, server: Server) -> None:
    import datasets.download.download_manager as dataset_downloads

    def replaceable() -> tuple[Any, ...]:
        return (
            dataset_downloads.cached_path,
            datasets.config.HF_DATASETS_CACHE,
            datasets.load_dataset,
            inspect_files.fsspec,
            inspect_download.httpx,
            huggingface_hub.hf_hub_download,
            huggingface_hub.snapshot_download,
        )

    before = replaceable()
    with pytest.raises(DatasetError), task_data(tmp_path, [], None):
        assert all(now != then for now, then in zip(replaceable(), before, strict=True))
        download(URL, sha(ROWS), tmp_path / "cache" / "rows.jsonl")
    assert replaceable() == before


def test_paths_are_written_as_every_clone_and_machine_records_them(tmp_path: Path) -> None:
    import inspect_evals

    installed = Path(inspect_evals.__file__).parent
    root = tmp_path / "project"
    shown = {
        "sandbox": str(installed / "mind2web_sc" / "compose.yaml"),
        "files": [str(root / "tasks" / "notes.txt"), "notes.txt"],
        "text": "What is up?",
        "count": 3,
        # a sample's own text naming the home or temporary folder: content, as written
        "machine": [os.path.join(os.path.expanduser("~"), "flag.txt"), tempfile.gettempdir()],
    }
    assert stable_paths(shown, root) == {
        "sandbox": "inspect_evals:mind2web_sc/compose.yaml",
        "files": ["tasks/notes.txt", "notes.txt"],
        "text": "What is up?",
        "count": 3,
        "machine": shown["machine"],
    }


class QuizScript(datasets.GeneratorBasedBuilder):
    """A dataset script as inspect_evals' script-built datasets have them: its rows in a file
    it downloads by URL (`dl_manager`)."""

    BUILDER_CONFIGS: ClassVar = [datasets.BuilderConfig(name="default")]

    def _info(self) -> datasets.DatasetInfo:
        text = datasets.Value("string")
        return datasets.DatasetInfo(features=datasets.Features({"input": text, "target": text}))

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        path = dl_manager.download_and_extract(URL)
        return [datasets.SplitGenerator(name="test", gen_kwargs={"path": path})]

    def _generate_examples(self, path: str) -> Any:
        with open(path, encoding="utf-8") as rows:
            yield from enumerate(json.loads(line) for line in rows)


def test_a_dataset_scripts_downloads_come_from_the_data_root(tmp_path: Path) -> None:
    copy = local_copy(tmp_path, ROWS)
    read: list[str] = []
    with task_data(tmp_path, read, None):
        builder = QuizScript()
        builder.download_and_prepare()
        scripted = [row["target"] for row in builder.as_dataset(split="test")]
    assert scripted == ["sky", "floor"] and read == [str(copy)]

    copy.unlink()
    missing = r"no local copy of https://files.example/quiz/rows.jsonl at "
    with pytest.raises(DatasetError, match=missing), task_data(tmp_path, [], None):
        QuizScript().download_and_prepare()
