"""Tests against lm-eval 0.4.13 itself (its own task folder, its own requests): they need the
lm-eval extra (`pip install -e ".[test,lm-eval]"`; `.ci/run` and `tox -e lm-eval` run them) and
are skipped without it. Rows are synthetic, written by the tests; nothing reaches the network.
The helpers beside them (`lm_eval_reference`, `lm_eval_rows`) are importable as plain modules."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
if importlib.util.find_spec("lm_eval") is not None:
    # before `datasets` is first imported (it reads them once); only where these tests run
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


@pytest.fixture(scope="session")
def lm_eval_tasks() -> Path:
    """lm-eval's installed task folder."""
    lm_eval = pytest.importorskip("lm_eval")
    return Path(lm_eval.__file__).parent / "tasks"
