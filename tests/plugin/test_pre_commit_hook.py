"""The shipped pre-commit hook (`.pre-commit-hooks.yaml`): a valid definition, documented in
docs/ci.md ("Before a commit"), whose command passes a commit that changes no prompt and fails one
that changes a prompt without a version bump."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from docs_text import section

if TYPE_CHECKING:
    from conftest import EvalProject

REPO = Path(__file__).resolve().parents[2]
HOOKS = REPO / ".pre-commit-hooks.yaml"
GIT_IDENTITY = ("-c", "user.email=dev@example.org", "-c", "user.name=Dev")
KNOWN_KEYS = {
    "id", "name", "entry", "language", "alias", "files", "exclude", "types", "types_or",
    "exclude_types", "additional_dependencies", "args", "always_run", "fail_fast",
    "pass_filenames", "description", "language_version", "log_file", "minimum_pre_commit_version",
    "require_serial", "stages", "verbose",
}  # fmt: skip
"""The keys pre-commit's manifest schema knows."""


def _hook() -> dict[str, Any]:
    hooks = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    assert isinstance(hooks, list) and len(hooks) == 1
    hook = hooks[0]
    assert isinstance(hook, dict)
    return hook


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=root, capture_output=True, text=True, check=True
    )
    return done.stdout


def run_hook(root: Path) -> subprocess.CompletedProcess[str]:
    """The hook's entry as pre-commit runs it: in the repository's top folder, no file names."""
    command = shlex.split(_hook()["entry"])
    assert command[0] == "pytest"
    env = {**os.environ, "PYTEST_ADDOPTS": "-p no:randomly -p no:hypothesispytest -p no:anyio"}
    return subprocess.run(
        [sys.executable, "-m", *command], cwd=root, env=env, capture_output=True, text=True
    )


def test_the_hook_definition_is_complete_and_documented() -> None:
    hook = _hook()
    assert set(hook) <= KNOWN_KEYS
    assert {"id", "name", "entry", "language"} <= set(hook)
    assert hook["id"] == "evaltasks-changed"
    assert hook["language"] == "python"  # pre-commit installs this repository, with pytest
    assert hook["pass_filenames"] is False
    assert hook["always_run"] is True
    assert "--evaltasks-changed" in hook["entry"]
    documented = section("docs/ci.md", "### Before a commit")
    assert "id: evaltasks-changed" in documented and ".pre-commit-hooks.yaml" in documented


def test_the_hook_fails_an_unversioned_prompt_change_and_passes_a_clean_commit(
    project: EvalProject,
) -> None:
    git(project.root, "init", "-q", "-b", "main")
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=3)
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "recorded")

    clean = run_hook(project.root)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "0 tasks changed since HEAD: nothing to check" in clean.stdout

    project.write_tasks(prefix="Question: ")  # every task's prompt, no version bump
    git(project.root, "add", "-A")  # staged, as pre-commit sees a commit
    changed = run_hook(project.root)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "FAILED evaltasks::solo|0" in changed.stdout
    assert "but its version is still 0" in changed.stdout

    project.write_tasks(
        'name="mytask:sub", version=1',
        'name="mytask:other", version=1, stop_sequence=["\\n"], generation_size=5',
        'name="solo", version=1, hf_avail_splits=["test"]',
        prefix="Question: ",
    )
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=3)
    git(project.root, "add", "-A")
    bumped = run_hook(project.root)
    assert bumped.returncode == 0, bumped.stdout + bumped.stderr
