"""Where an Inspect task's data comes from while it is built: the data root first.

- A dataset read through `datasets` (`hf_dataset`, `load_dataset`) comes from
  `<data root>/<path>/<name or default>/<split>.jsonl` (`local_datasets.LocalDatasets`), as
  for lighteval's and lm-eval's tasks.
- A file read by URL (`csv_dataset` or `json_dataset` on an `https://`, `s3://`, ... file,
  inspect_evals' cached loaders, which fetch through the same call, Inspect's checksummed
  `download()`, and a dataset script's `dl_manager.download`) comes from
  `<data root>/<host>/<the URL's path>` (`url_copy`).
- A Hub repository's files (`huggingface_hub`'s `hf_hub_download`, `snapshot_download`) come
  from `<data root>/datasets/<repo>/` (`hf://datasets/<repo>/<path>`, as a URL).

What has no local copy is fetched as Inspect would fetch it (the Hub or its cache, the URL); a
failure is an error that says where the local copy goes. Inspect's and inspect_evals' own
download caches, and the cache of a `datasets` builder a task makes itself, are kept in a
temporary folder while a task is built: a copy cached there would be read instead of the data
root's, and a fetch would be saved into the user's cache.

`stable_paths` writes the paths a build shows as every clone and machine records them.

`--evaltasks-save-data` builds a task with `Fetched` collecting what it fetched, skipping local
copies: the first rows of each dataset split read, and each URL's file whole (Inspect reads it
whole, and a task that samples or shuffles its rows needs them all), are then written where the
next build reads them (`Fetched.prepared`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from ...engine.paths import MACHINE_FOLDERS as NAMED_FOLDERS
from ...engine.paths import relative_path_text
from ...errors import DatasetError
from ..local_datasets import LocalDatasets, folder_for, local_subset
from .installed import OWN_PREFIX, installed_package

LOCAL_SCHEMES = frozenset({"", "file", "local"})
"""URL schemes of local files, read where they are (a drive letter is one letter)."""

MANIFEST_KEYS = ("revision", "split")
"""The `load_dataset` arguments a slice's MANIFEST records beside the dataset's path and name
(local data files are the machine's, and not recorded)."""

PLAIN_SPLIT = re.compile(r"[\w.-]+")
"""A split `--evaltasks-save-data` can save (not a slice such as `train[:10]`)."""


def is_remote(urlpath: object) -> bool:
    """A file named by a URL Inspect fetches (`https://...`, `s3://...`, `hf://...`)."""
    if not isinstance(urlpath, str) or "://" not in urlpath:
        return False
    scheme = urlsplit(urlpath).scheme
    return scheme not in LOCAL_SCHEMES and len(scheme) > 1


def url_copy(data_dir: Path | None, url: str) -> Path | None:
    """Where the local copy of a URL's file is: `<data root>/<host>/<path>` (a query, if any,
    kept in the file name); None without a data root or for a URL that would leave it."""
    if data_dir is None:
        return None
    parts = urlsplit(url)
    path = parts.path.strip("/")
    if parts.query:
        path += "%3F" + quote(parts.query, safe="")
    pieces = [parts.netloc, *path.split("/")]
    if not path or any(piece in ("", ".", "..") for piece in pieces):
        return None
    return data_dir.joinpath(*pieces)


def local_copy(data_dir: Path | None) -> Callable[[str], bytes | None]:
    """A URL's local copy's bytes in the data root, or None (`media.Fetch`): how an image a
    sample names by URL is read, as the rest of the task's files by URL are."""

    def read(url: str) -> bytes | None:
        copy = url_copy(data_dir, url) if is_remote(url) else None
        return copy.read_bytes() if copy is not None and copy.is_file() else None

    return read


@dataclass
class Fetched:
    """What a task fetched while built for `--evaltasks-save-data`: dataset splits by the
    data-root folder they go in, and URL files by their local copy's path."""

    data_dir: Path
    task: str
    datasets: dict[Path, dict[str, Any]] = field(default_factory=dict)
    """Folder to {split: the full `datasets.Dataset`}."""
    coordinates: dict[Path, dict[str, Any]] = field(default_factory=dict)
    """Folder to the `load_dataset` arguments that name the dataset (its MANIFEST)."""
    files: dict[Path, tuple[str, bytes]] = field(default_factory=dict)
    """Local copy to (URL, content)."""

    def add_dataset(self, path: Any, name: Any, kwargs: dict[str, Any], loaded: Any) -> None:
        """A `load_dataset` call's result, by split; refused (naming the task) when its folder
        would be outside the data root or its split is an expression."""
        folder = folder_for(self.data_dir, path, local_subset(name, kwargs.get("data_dir")))
        if folder is None:
            raise DatasetError(
                f"task {self.task!r}: dataset {path!r} names no folder inside the data root "
                f"({self.data_dir}); --evaltasks-save-data writes only there"
            )
        split = kwargs.get("split")
        if split is None:
            splits = dict(loaded)
        elif isinstance(split, str) and PLAIN_SPLIT.fullmatch(split):
            splits = {split: loaded}
        else:
            raise DatasetError(
                f"task {self.task!r}: dataset {path!r} is read as split {split!r}, which a "
                f"local folder cannot hold; save the whole split's rows as <split>.jsonl in "
                f"{folder} by hand"
            )
        for key, rows in splits.items():
            if not hasattr(rows, "select") or not hasattr(rows, "__len__"):
                raise DatasetError(
                    f"task {self.task!r}: dataset {path!r} split {key!r} is read as a "
                    f"{type(rows).__name__} (streamed?), which cannot be sliced; save its rows "
                    f"as {folder / key}.jsonl by hand"
                )
            self.datasets.setdefault(folder, {}).setdefault(key, rows)
        self.coordinates.setdefault(
            folder,
            {"dataset_path": path, "dataset_name": name}
            | {key: kwargs[key] for key in MANIFEST_KEYS if isinstance(kwargs.get(key), str)},
        )

    def add_file(self, url: str, data: bytes) -> None:
        """A URL's file as fetched; refused when its copy would be outside the data root."""
        copy = url_copy(self.data_dir, url)
        if copy is None:
            raise DatasetError(
                f"task {self.task!r}: URL {url!r} has no place in the data root "
                f"({self.data_dir}); --evaltasks-save-data writes only there"
            )
        self.files.setdefault(copy, (url, data))

    def prepared(self, count: int) -> list[Any]:
        """Every slice to write: the first `count` rows of each split read, with a MANIFEST
        naming the dataset, and each URL file whole."""
        from ...engine.data_slices import PreparedSlice, sliced

        slices = [
            sliced(splits, list(splits), count, self.task, folder, self.coordinates[folder])
            for folder, splits in self.datasets.items()
        ]
        for copy, (url, data) in self.files.items():
            rows = {copy.name: data.count(b"\n") + (not data.endswith(b"\n") and bool(data))}
            slices.append(PreparedSlice(copy.parent, {copy.name: data}, rows, rows, [], url))
        return slices


class _SavingDatasets(LocalDatasets):
    """`datasets` while a task is built for `--evaltasks-save-data`: every dataset is loaded
    by `datasets` itself (the data root's copy is what is being replaced) and kept."""

    def __init__(self, real: Any, fetched: Fetched) -> None:
        super().__init__(real, None, [])
        self._fetched = fetched

    def load_dataset(self, path: Any = None, name: Any = None, **kwargs: Any) -> Any:
        loaded = super().load_dataset(path, name, **kwargs)
        self._fetched.add_dataset(path, name, kwargs, loaded)
        return loaded


_SERVED: dict[str, str] = {}
"""The digest of each file served by URL in this process -> its URL: a later build finds the
file its task downloaded in the process's download folder without fetching it again."""


class _RemoteFiles:
    """Files named by URL while a task is built: the local copy in the data root when there is
    one, else fetched (and kept, when saving); a fetch that fails is an error saying where the
    copy goes."""

    def __init__(self, data_dir: Path | None, read: list[str], fetched: Fetched | None) -> None:
        self._data_dir = data_dir
        self._read = read
        self._fetched = fetched

    def content(self, url: str, fetch: Callable[[], bytes]) -> bytes:
        """The URL's file, from its local copy or by `fetch`."""
        copy = url_copy(self._data_dir, url)
        if self._fetched is None and copy is not None and copy.is_file():
            self._read.append(str(copy))
            data = copy.read_bytes()
        else:
            try:
                data = fetch()
            except Exception as exc:
                raise self.unfetched(url, exc) from exc
            if self._fetched is not None:
                self._fetched.add_file(url, data)
        _SERVED.setdefault(hashlib.sha256(data).hexdigest(), url)
        return data

    def origin(self, path: str) -> str | None:
        """What a local file a task wrote from a URL's content (a download into a cache) is, as
        records name it: `<URL> (sha256:<digest>)`, the same in every build and clone; None for a
        file no URL gave (or none at all)."""
        try:
            digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        except (OSError, ValueError):
            return None
        url = _SERVED.get(digest)
        return None if url is None else f"{url} (sha256:{digest[:16]})"

    def folder(self, url: str) -> Path | None:
        """The local copy of a folder of files (a URL ending in `/`), when there is one to
        read (when saving, there is not: it is what is being replaced)."""
        copy = url_copy(self._data_dir, url)
        return copy if self._fetched is None and copy is not None and copy.is_dir() else None

    def unfetched(self, url: str, exc: Exception) -> DatasetError:
        """The error for a file or folder with no local copy whose fetch failed: where its
        copy goes."""
        copy = url_copy(self._data_dir, url)
        where = f" at {copy}" if copy is not None else ""
        return DatasetError(
            f"no local copy of {url}{where}, and it could not be fetched: "
            f"{type(exc).__name__}: {exc}. Put it there, or save it with "
            f"--evaltasks-save-data where the URL is reachable"
        )


class _LocalFsspec:
    """The `fsspec` module as Inspect's `file()` sees it (`csv_dataset`, `json_dataset` and
    inspect_evals' cached loaders read through it): a URL's file read from `_RemoteFiles`."""

    def __init__(self, real: Any, remote: _RemoteFiles) -> None:
        self._real = real
        self._remote = remote

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def open(self, urlpath: Any, mode: str = "rb", **kwargs: Any) -> Any:
        if not is_remote(urlpath) or "r" not in mode:
            return self._real.open(urlpath, mode=mode, **kwargs)
        options = {key: value for key, value in kwargs.items() if key != "encoding"}

        def fetch() -> bytes:
            with self._real.open(urlpath, mode="rb", **options) as stream:
                return bytes(stream.read())

        data = io.BytesIO(self._remote.content(urlpath, fetch))
        encoding = kwargs.get("encoding") or "utf-8"
        return contextlib.nullcontext(
            data if "b" in mode else io.TextIOWrapper(data, encoding=encoding)
        )


class _LocalHttpx:
    """The `httpx` module as Inspect's checksummed `download()` sees it (inspect_evals' tasks
    fetch their files with it): a GET's body read from `_RemoteFiles`; `download` then checks
    it against the task's checksum as it would a fetched one."""

    def __init__(self, real: Any, remote: _RemoteFiles) -> None:
        self._real = real
        self._remote = remote

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    @contextlib.contextmanager
    def stream(self, method: str, url: Any, **kwargs: Any) -> Iterator[Any]:
        if method.upper() != "GET":
            with self._real.stream(method, url, **kwargs) as response:
                yield response
            return

        def fetch() -> bytes:
            response = self._real.get(url, **kwargs)
            response.raise_for_status()
            return bytes(response.content)

        yield _Body(self._remote.content(str(url), fetch))


class _LocalHub:
    """`huggingface_hub`'s downloads (`hf_hub_download`, `snapshot_download`) as a task sees
    them: each file is the file of its `hf://` URL (`hf://datasets/<repo>/<path>`) read from
    `_RemoteFiles`, so a dataset repository's local copy is `<data root>/datasets/<repo>/`.
    Files go where the caller asks (`local_dir`), else into this process's private download
    folder, whose path a record writes as `PRIVATE_CACHE_NAME`: the data root's own path is the
    clone's, and a sample that names a file must be the same in every clone."""

    def __init__(self, real: dict[str, Callable[..., Any]], remote: _RemoteFiles) -> None:
        self._real = real
        self._remote = remote

    def hf_hub_download(
        self, repo_id: str, filename: str, *, subfolder: str | None = None, **kwargs: Any
    ) -> str:
        path = f"{subfolder.strip('/')}/{filename}" if subfolder else filename
        base = _hub_url(repo_id, kwargs.get("repo_type"))

        def fetch() -> bytes:
            with tempfile.TemporaryDirectory() as folder:
                options = {**kwargs, "subfolder": subfolder, "local_dir": folder}
                got = self._real["hf_hub_download"](repo_id, filename, **options)
                return Path(got).read_bytes()

        target = _hub_target(kwargs.get("local_dir"), base)
        return str(_placed(target, path, self._remote.content(base + path, fetch)))

    def snapshot_download(self, repo_id: str, **kwargs: Any) -> str:
        from huggingface_hub.utils import filter_repo_objects  # type: ignore[attr-defined]

        base = _hub_url(repo_id, kwargs.get("repo_type"))
        target = _hub_target(kwargs.get("local_dir"), base)
        with tempfile.TemporaryDirectory() as folder:
            source = self._remote.folder(base)
            if source is None:
                source = Path(folder)
                try:
                    self._real["snapshot_download"](repo_id, **{**kwargs, "local_dir": folder})
                except Exception as exc:
                    raise self._remote.unfetched(base, exc) from exc
            paths = sorted(
                file.relative_to(source).as_posix()
                for file in source.rglob("*")
                if file.is_file() and ".cache" not in file.relative_to(source).parts
            )
            wanted = filter_repo_objects(
                paths,
                allow_patterns=kwargs.get("allow_patterns"),
                ignore_patterns=kwargs.get("ignore_patterns"),
            )
            for path in wanted:
                fetch = partial(Path.read_bytes, source / path)
                _placed(target, path, self._remote.content(base + path, fetch))
        return str(target)


def _hub_url(repo_id: str, repo_type: str | None) -> str:
    """The `hf://` URL of a Hub repository's folder, as `huggingface_hub`'s file system names
    it (a model's without a prefix)."""
    prefix = {"dataset": "datasets/", "space": "spaces/"}.get(repo_type or "model", "")
    return f"hf://{prefix}{repo_id}/"


def _hub_target(local_dir: Any, base: str) -> Path:
    """Where a repository's files are written for the caller: its `local_dir`, else the
    repository's folder in this process's private download folder."""
    if local_dir is not None:
        return Path(local_dir)
    folder = url_copy(Path(_process_cache(), "hub"), base)
    if folder is None:
        raise DatasetError(f"{base} names no repository")
    return folder


def _placed(target: Path, path: str, data: bytes) -> Path:
    """A repository's file written at `path` in `target`."""
    placed = target / path
    placed.parent.mkdir(parents=True, exist_ok=True)
    placed.write_bytes(data)
    return placed


class _LocalDownloads:
    """`datasets`' `cached_path` as its download manager calls it for a dataset script that a
    task's code runs (`dl_manager.download(url)`, piqa's): a file by URL read from
    `_RemoteFiles` into `folder` (the build's own), then given to `datasets` as the local file
    it now is (extracted as `datasets` extracts it); Hub files and local paths as `datasets`
    has them."""

    def __init__(self, real: Callable[..., str], remote: _RemoteFiles) -> None:
        self._real = real
        self._remote = remote

    def __call__(
        self, url_or_filename: Any, download_config: Any = None, *, folder: Path, **kwargs: Any
    ) -> str:
        url = str(url_or_filename)
        local = url_copy(folder, url) if is_remote(url) else None
        if local is None or url.startswith("hf://") or "::" in url:
            return self._real(url_or_filename, download_config=download_config, **kwargs)

        def fetch() -> bytes:
            from datasets import DownloadConfig

            config = download_config.copy() if download_config else DownloadConfig(**kwargs)
            config.extract_compressed_file = False
            return Path(self._real(url, download_config=config)).read_bytes()

        placed = _placed(local.parent, local.name, self._remote.content(url, fetch))
        return self._real(str(placed), download_config=download_config, **kwargs)


@dataclass(frozen=True)
class _Body:
    """A fetched body as `download()` reads an `httpx` response."""

    data: bytes

    def raise_for_status(self) -> None:
        return None

    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]:
        size = chunk_size or len(self.data) or 1
        for start in range(0, len(self.data), size):
            yield self.data[start : start + size]


@contextlib.contextmanager
def task_data(
    data_dir: Path | None, read: list[str], fetched: Fetched | None
) -> Iterator[Callable[[str], str | None]]:
    """Rows and files from the data root while a task is built (or, with `fetched`, fetched
    and kept): `datasets` as the task's loaders see it (they call the module's
    `load_dataset`), each way a task fetches a file by URL or from the Hub through
    `_RemoteFiles`, and Inspect's and inspect_evals' download caches, and the cache of builders
    a task makes itself, an empty temporary folder. Everything replaced is restored as the
    build ends. Yields what names a file downloaded from a URL by its URL and digest
    (`_RemoteFiles.origin`), while the build's folders still hold it."""
    import datasets
    import datasets.download.download_manager as dataset_downloads
    import huggingface_hub
    import inspect_ai._util.download as inspect_download
    import inspect_ai._util.file as inspect_files
    import inspect_ai.dataset._sources.hf as hf_source

    _emptied(_private_folder)  # the build's own: what a task downloads, it downloads again
    unpatched = _Unpatched(
        datasets, _cached_in(datasets.load_dataset, datasets.config.HF_DATASETS_CACHE)
    )
    stand_in = (
        LocalDatasets(unpatched, data_dir, read)
        if fetched is None
        else _SavingDatasets(unpatched, fetched)
    )
    remote = _RemoteFiles(data_dir, read, fetched)
    hub = _LocalHub({name: getattr(huggingface_hub, name) for name in HUB_DOWNLOADS}, remote)
    downloads = _LocalDownloads(dataset_downloads.cached_path, remote)
    with (
        tempfile.TemporaryDirectory(prefix="inspect-build-", dir=_build_folders()) as folder,
        contextlib.ExitStack() as stack,
    ):
        swap = partial(_swap, stack)
        swap(datasets, "load_dataset", _unsaved(stand_in.load_dataset))
        swap(inspect_files, "fsspec", _LocalFsspec(inspect_files.fsspec, remote))
        swap(inspect_download, "httpx", _LocalHttpx(inspect_download.httpx, remote))
        swap(dataset_downloads, "cached_path", partial(downloads, folder=Path(folder, "urls")))
        for name in HUB_DOWNLOADS:
            swap(huggingface_hub, name, getattr(hub, name))
        swap(hf_source, "inspect_cache_dir", lambda subdir, create=True: Path(folder))
        swap(datasets.config, "HF_DATASETS_CACHE", Path(folder, "datasets"))
        loaders = sys.modules.get("inspect_evals.utils.load_dataset")
        if loaders is not None:  # its cached URL loaders (`load_json_dataset`, ...) fetch
            # through Inspect's `file()` on each build; imported (or not) by the task's module
            swap(loaders, "INSPECT_EVALS_CACHE_PATH", Path(folder))
        yield remote.origin


def _swap(stack: contextlib.ExitStack, owner: Any, name: str, value: Any) -> None:
    """`owner.name` is `value` until `stack` closes."""
    stack.callback(setattr, owner, name, getattr(owner, name))
    setattr(owner, name, value)


HUB_DOWNLOADS = ("hf_hub_download", "snapshot_download")
"""`huggingface_hub`'s calls that download a repository's files (inspect_evals calls them
through the module, so a stand-in on the module is what its tasks call)."""

EVALS_CACHE_VARIABLE = "INSPECT_EVALS_CACHE_DIR"
"""Where inspect_evals keeps what its tasks download (read once, as it is imported)."""


@contextlib.contextmanager
def private_evals_cache() -> Iterator[None]:
    """inspect_evals, when first imported here, keeps its downloads in a folder of this
    process's own (removed at exit) and not the user's cache: a file cached there would be read
    instead of the data root's copy, unrecorded, and a fetch would be written outside the
    project. Its tasks derive their paths from the folder as they are imported, so this is
    around every import of a task's module."""
    if "inspect_evals.constants" in sys.modules:
        yield
        return
    saved = os.environ.get(EVALS_CACHE_VARIABLE)
    os.environ[EVALS_CACHE_VARIABLE] = _process_cache()
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(EVALS_CACHE_VARIABLE, None)
        else:
            os.environ[EVALS_CACHE_VARIABLE] = saved


_private_folder: str | None = None
"""This process's inspect_evals download folder, once made."""


PRIVATE_CACHE_NAME = "$INSPECT_EVALS_CACHE_DIR"
"""How the private download folder is written where a build shows it (a dataset's location, a
sample's file): its path is the process's own, and a record is the same in every process."""


def stable_paths(value: Any, root: Path | None = None) -> Any:
    """`value` (plain data) as every process, clone and machine records it: the private
    download folder written as `PRIVATE_CACHE_NAME`, a path in inspect_evals' installed folder
    as `inspect_evals:<path>` (the venv's place is the machine's), and a path inside the
    project relative to `root` (a task's own files are often named from its `__file__`); any
    other string as written."""
    if isinstance(value, str):
        return _stable_text(value, root)
    if isinstance(value, list):
        return [stable_paths(item, root) for item in value]
    if isinstance(value, dict):
        return {key: stable_paths(item, root) for key, item in value.items()}
    return value


def _stable_text(text: str, root: Path | None) -> str:
    """One string of `stable_paths`."""
    if _private_folder is not None:
        text = text.replace(_private_folder, PRIVATE_CACHE_NAME)
    for folder in _installed_folders():
        if text.startswith(folder + os.sep):
            return OWN_PREFIX + text[len(folder) + 1 :].replace(os.sep, "/")
    shown = relative_path_text(text, root)
    return text if shown.startswith(MACHINE_FOLDERS) else shown


MACHINE_FOLDERS = NAMED_FOLDERS
"""How `relative_path_text` names the machine folders (home, temporary, ...). A sample's own
text that names a path there (`/root/flag.txt`, `/tmp/out.txt`) is the task's content, kept as
written: named by the folder's variable, it would differ between machines whose home differs."""


@functools.cache
def _installed_folders() -> tuple[str, ...]:
    """inspect_evals' installed folder, as imported and resolved (found once)."""
    folder = installed_package()
    if folder is None:
        return ()
    return tuple(dict.fromkeys((str(folder), os.path.realpath(folder))))


def _emptied(folder: str | None) -> None:
    """The process's inspect_evals download folder emptied as a build starts: a task that
    skips its download when its files are there (medqa's `load_hf_dataset_with_script`) reads
    the data root on every build, so every build records the same inputs. Its path stays what
    every record names (`PRIVATE_CACHE_NAME`)."""
    if folder is None or not os.path.isdir(folder):
        return
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def _build_folders() -> str:
    """Where a build's temporary folder goes: the run's (`run_folder`)."""
    from ...engine.run_folder import run_folder

    return str(run_folder())


def _process_cache() -> str:
    """A temporary folder for this process (made once, in the run's: `run_folder`)."""
    global _private_folder
    if _private_folder is None:
        from ...engine.run_folder import run_folder

        _private_folder = tempfile.mkdtemp(prefix="inspect-evals-", dir=run_folder())
    return _private_folder


def _cached_in(load_dataset: Any, cache: Any) -> Any:
    """`load_dataset` with `datasets`' own cache (where `HF_HUB_OFFLINE=1` finds a Hub
    dataset), while the cache a builder made in a task's own code defaults to is the build's
    temporary folder: such a builder (inspect_evals' script-built datasets) names its cache by
    its code alone, so a copy cached by an earlier run would be read instead of the data root's
    files, unrecorded."""

    def load(*args: Any, **kwargs: Any) -> Any:
        return load_dataset(*args, **{"cache_dir": str(cache), **kwargs})

    return load


def _unsaved(load_dataset: Any) -> Any:
    """`load_dataset` whose datasets are never saved to disk: Inspect's `hf_dataset` saves
    what it loads into its cache, and the rows must come from the data root on every build."""

    def load(*args: Any, **kwargs: Any) -> Any:
        dataset = load_dataset(*args, **kwargs)
        with contextlib.suppress(AttributeError, TypeError):
            dataset.save_to_disk = lambda *args, **kwargs: None
        return dataset

    return load


class _Unpatched:
    """The `datasets` module with its own `load_dataset`, for the stand-in to fall back on
    while the module's attribute is the stand-in's."""

    def __init__(self, module: Any, load_dataset: Any) -> None:
        self._module = module
        self.load_dataset = load_dataset

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)
