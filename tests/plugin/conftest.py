"""Shared helpers for the plugin's end-to-end tests.

Every test builds a small project inside pytester's directory: a `tasks/` directory holding
task modules with a `TASKS_TABLE`, local data under `tasks/data/<repo>/<subset>/<split>.jsonl`,
and runs `pytest --evaltasks ...` in a subprocess, the way a user runs it.
"""

from __future__ import annotations

import json
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

EVAL_ROWS = [{"q": f"question {i} \u00bfqu\u00e9?", "label": i % 2} for i in range(6)]
TRAIN_ROWS = [{"q": f"train {i}", "label": i % 2} for i in range(5)]


@dataclass
class EvalProject:
    """A throwaway project in pytester's directory, with helpers to edit and run it."""

    pytester: pytest.Pytester

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

    def run(self, *args: str) -> pytest.RunResult:
        """`pytest ARGS` in a fresh interpreter, started in the project directory."""
        return self.pytester.runpytest_subprocess(*UNRELATED_PLUGINS, *args)

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


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> EvalProject:
    """The default project: tasks `mytask:sub`, `mytask:other`, `solo` over 6 eval rows."""
    # Tests rewrite task files within a second, sometimes keeping their size (`version=0` ->
    # `version=1`); a cached .pyc would then hide the edit (see test_version_gate).
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    evalproject = EvalProject(pytester)
    evalproject.write_data("demo", "main", "test", EVAL_ROWS)
    evalproject.write_data("demo", "main", "train", TRAIN_ROWS)
    evalproject.write_tasks()
    return evalproject
