"""Tests against Inspect itself (inspect_ai 0.3.285 and inspect_evals 0.26.0: their own tasks,
their own eval loop): they need the inspect extra (`pip install -e ".[test,inspect]"`;
`.ci/run` and `tox -e inspect` run them) and are skipped without it. Rows are synthetic,
written by the tests (`inspect_rows`); nothing reaches the network. The helpers beside them
(`inspect_reference`, `inspect_rows`) are importable as plain modules."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
if importlib.util.find_spec("inspect_evals") is not None:
    # before `datasets` is first imported (it reads them once); only where these tests run
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("INSPECT_DISABLE_TELEMETRY", "1")


@pytest.fixture(autouse=True)
def no_inspect_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inspect's own runs (the reference) cache datasets in the user's cache folder: a
    temporary one instead."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
