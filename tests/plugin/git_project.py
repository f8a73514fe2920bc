"""A git project for changed-only runs: task modules written from one template, recorded and
committed on `main`, then edited, and the helpers that ask what a changed-only run selects and
whether a full run fails."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import EvalProject

GIT_IDENTITY = ("-c", "user.email=ci@example.org", "-c", "user.name=CI",
                "-c", "protocol.file.allow=always")  # fmt: skip

TASK = """\
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics
{imports}

def prompt(row, task_name):
{body}
    return Doc(query=prefix + row["q"], choices=[" yes", " no"], gold_index=row["label"])


TASKS_TABLE = [LightevalTaskConfig(name="{name}", prompt_function=prompt, hf_repo="demo",
               hf_subset="main", metrics=[Metrics.loglikelihood_acc], evaluation_splits=["test"],
               few_shots_split="train"{extra})]
"""


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=root, capture_output=True, text=True, check=True
    )
    return done.stdout


def task_module(
    project: EvalProject, name: str, body: str, imports: str = "", extra: str = "", file: str = ""
) -> Path:
    path = project.root / "tasks" / (file or f"{name}.py")
    path.parent.mkdir(parents=True, exist_ok=True)
    text = TASK.format(
        name=name, imports=imports, body=textwrap.indent(textwrap.dedent(body), "    "), extra=extra
    )
    path.write_text(text, encoding="utf-8")
    return path


def commit_recorded(project: EvalProject, *extra: str) -> None:
    """Record every task, and commit everything on `main`."""
    (project.root / "tasks" / "demo.py").unlink(missing_ok=True)
    if not (project.root / ".git").exists():
        git(project.root, "init", "-q", "-b", "main")
    # what pytester's runs in a fresh interpreter leave in the project folder
    (project.root / ".gitignore").write_text("stdout\nstderr\nrunpytest-*\n", encoding="utf-8")
    recorded = project.run("--evaltasks", "all", "--snapshot-update", *extra)
    assert recorded.ret == 0, recorded.stdout.str()
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "recorded")


def selected(project: EvalProject, *extra: str) -> list[str]:
    """The items a changed-only run since `main` selects."""
    result = project.run("--evaltasks-changed=main", "--collect-only", "-q", *extra)
    return [line for line in result.outlines if line.startswith("evaltasks::")]


def assert_caught(project: EvalProject, label: str, *extra: str) -> None:
    """The changed-only run selects `label`, and the full run fails for it. The selection
    comes first, as in CI: it must not lean on what an earlier build in the same test process
    saw."""
    assert f"evaltasks::{label}" in selected(project, *extra)
    full = project.run("--evaltasks", "all", *extra)
    assert f"FAILED evaltasks::{label}" in full.stdout.str(), full.stdout.str()


def header(project: EvalProject, *extra: str) -> str:
    """What a changed-only run since `main` says it selected, and why."""
    result = project.run("--evaltasks-changed=main", "--collect-only", *extra)
    return next((line for line in result.outlines if "changed since main" in line), "")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
