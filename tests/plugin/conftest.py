"""Shared helpers for the plugin's end-to-end tests.

Every test builds a small project inside pytester's directory: a `tasks/` directory holding
task modules with a `TASKS_TABLE`, local data under `tasks/data/<repo>/<subset>/<split>.jsonl`,
and runs `pytest --evaltasks ...` there, the way a user runs it.

`EvalProject.run` runs pytest in this process (pytester's in-process run: a fresh config and
session, sys.modules and sys.path restored afterwards), which saves the start-up of an
interpreter per run. A test that needs a fresh interpreter says so with the `subprocess` marker
(on the test or its module) or `run(..., subprocess=True)`: environment variables read only at
start-up or import (PYTHONHASHSEED, HF_*), processes that kill themselves, resource limits,
memory peaks, nested xdist runs. EVALTASKS_TEST_SUBPROCESS=1 runs every test in a subprocess,
to compare the two modes.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import os
import pkgutil
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_evaltasks.snapshot.storage import snapshot_filename

MODULE_TEMPLATE = """\
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

PREFIX = {prefix!r}
EDITED = {edited!r}
{header}

def prompt(row, task_name):
{prompt_body}


def cfg(**overrides):
    base = dict(
        prompt_function=prompt,
        hf_repo="demo",
        hf_subset="main",
        metrics=[Metrics.exact_match],
        hf_avail_splits=["train", "test"],
        evaluation_splits=["test"],
    )
    base.update(overrides)
    return base


TASKS_TABLE = [
{configs}
]
"""

DEFAULT_PROMPT = """\
    query = f"{PREFIX}{row['q']}\\nA:"
    if row["__index"] in EDITED and not row["__few_shots"]:
        query += " (edited)"
    return Doc(query=query, choices=[" yes", " no"], gold_index=row["label"])"""

DEFAULT_TASKS = (
    'name="mytask:sub", version=0',
    'name="mytask:other", version=0, stop_sequence=["\\n"], generation_size=5',
    'name="solo", version=0, hf_avail_splits=["test"]',
)
"""`mytask` is a superset of two tasks; `solo` has no few-shot split of its own."""

UNRELATED_PLUGINS = ("-p", "no:hypothesispytest", "-p", "no:anyio")
"""Installed in this venv but unrelated to ours; importing them doubles each run's startup."""

SUBPROCESS_ALWAYS = os.environ.get("EVALTASKS_TEST_SUBPROCESS", "") not in ("", "0")

KEPT_IMPORTS = (
    "pytest_evaltasks",
    "syrupy",
    "jinja2",
    "pydantic",
    "pydantic_core",
    "numpy",
    "pyarrow",
    "datasets",
    "pandas",
    "pandas.core.arrays.arrow.extension_types",  # registered with pyarrow on first use
)
"""Imported once, before pytester snapshots sys.modules, so in-process runs never drop them:
pytester removes whatever a run imported, and numpy cannot be imported twice in a process, nor
datasets or pandas (they register their Arrow extension types with pyarrow, once per process).
Task modules and their helpers live in each test's own folder and are dropped."""


def forget_observed_reads() -> None:
    """Start an in-process run as a fresh process starts: without the files earlier runs' code
    was seen to open (kept for the life of a process), which a real run never has."""
    from pytest_evaltasks.engine import inputs

    inputs._opened_by.clear()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "subprocess: run this test's `project.run` calls in a fresh interpreter, not in process",
    )


EVAL_ROWS = [{"q": f"question {i} \u00bfqu\u00e9?", "label": i % 2} for i in range(6)]
TRAIN_ROWS = [{"q": f"train {i}", "label": i % 2} for i in range(5)]


@dataclass
class EvalProject:
    """A throwaway project in pytester's directory, with helpers to edit and run it."""

    pytester: pytest.Pytester
    subprocess: bool = False
    """Whether `run` starts a fresh interpreter by default (the test's `subprocess` marker)."""

    @property
    def root(self) -> Path:
        """The project directory (pytester's, where pytest is started)."""
        return self.pytester.path

    @property
    def snapshot_dir(self) -> Path:
        """The default snapshot directory."""
        return self.root / "tasks" / "__snapshots__"

    def write_data(self, repo: str, subset: str, split: str, rows: list[dict[str, object]]) -> None:
        """One split of a local dataset, as jsonl."""
        path = self.root / "tasks" / "data" / repo / subset / f"{split}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    def write_tasks(
        self,
        *configs: str,
        module: str = "demo",
        prefix: str = "Q: ",
        edited: tuple[int, ...] = (),
        prompt_body: str = DEFAULT_PROMPT,
        header: str = "",
    ) -> Path:
        """A task module; each config is the keyword text of one `cfg(...)` call.

        No configs means the default three tasks. `edited` lists eval row indices whose
        prompt gets an extra " (edited)": an edit of the prompt function that changes
        exactly those docs.
        """
        configs = configs or DEFAULT_TASKS
        lines = "\n".join(f"    LightevalTaskConfig(**cfg({spec}))," for spec in configs)
        text = MODULE_TEMPLATE.format(
            prefix=prefix,
            edited=set(edited),
            header=textwrap.dedent(header),
            prompt_body=prompt_body,
            configs=lines,
        )
        path = self.root / "tasks" / f"{module}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def run(self, *args: str, subprocess: bool | None = None) -> pytest.RunResult:
        """`pytest ARGS` started in the project directory: in this process, or in a fresh
        interpreter with `subprocess=True` (default: the test's `subprocess` marker)."""
        fresh = self.subprocess if subprocess is None else subprocess
        if fresh or SUBPROCESS_ALWAYS:
            return self.pytester.runpytest_subprocess(*UNRELATED_PLUGINS, *args)
        forget_observed_reads()
        return self.pytester.runpytest_inprocess(*UNRELATED_PLUGINS, *args)

    def snapshot(self, key: str, directory: Path | None = None) -> Path:
        """Where the snapshot of item `key` (e.g. `mytask:sub|0`) lives."""
        return (directory or self.snapshot_dir) / snapshot_filename(key)

    @staticmethod
    def failures(result: pytest.RunResult) -> str:
        """The FAILURES section of a run's output (empty when nothing failed)."""
        text = result.stdout.str()
        start = text.find("= FAILURES =")
        if start == -1:
            return ""
        end = text.find("\n=", text.find("\n", start) + 1)
        return text[start:] if end == -1 else text[start:end]

    def snapshots(self, directory: Path | None = None) -> dict[str, bytes]:
        """Every file in a snapshot directory, by name, as bytes."""
        folder = directory or self.snapshot_dir
        if not folder.is_dir():
            return {}
        return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


@pytest.fixture(scope="session")
def kept_imports() -> None:
    """Import what in-process runs use before any pytester snapshot of sys.modules is taken
    (a session fixture is set up before the function-scoped pytester)."""
    for name in KEPT_IMPORTS:
        if importlib.util.find_spec(name) is None:
            continue
        package = importlib.import_module(name)
        if name not in ("pytest_evaltasks", "syrupy"):
            continue
        for module in pkgutil.walk_packages(package.__path__, f"{name}."):
            # An adapter for an optional dependency that is absent stays unimported.
            with contextlib.suppress(ImportError):
                importlib.import_module(module.name)


@pytest.fixture
def project(
    kept_imports: None,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> EvalProject:
    """The default project: tasks `mytask:sub`, `mytask:other`, `solo` over 6 eval rows."""
    # Tests rewrite task files within a second, sometimes keeping their size (`version=0` ->
    # `version=1`); a cached .pyc would then hide the edit (see test_version_gate). The
    # variable covers subprocesses, the flag runs in this process.
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    evalproject = EvalProject(pytester, request.node.get_closest_marker("subprocess") is not None)
    evalproject.write_data("demo", "main", "test", EVAL_ROWS)
    evalproject.write_data("demo", "main", "train", TRAIN_ROWS)
    evalproject.write_tasks()
    return evalproject
