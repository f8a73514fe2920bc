"""The shipped GitHub Actions workflow, run step by step on simulated pull requests and pushes.

A throwaway origin holds `main` with recorded tasks. A pull request is checked out as GitHub
checks it out: a clone with the whole history (`fetch-depth: 0`), detached on the merge commit
of the branch into `main`. The workflow's own `run` lines are executed with the environment the
workflow sets; only the install step is skipped (the package is installed here already).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from docs_text import section

yaml = pytest.importorskip("yaml")

if TYPE_CHECKING:
    from conftest import EvalProject

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "prompts.yml"
GIT_IDENTITY = ("-c", "user.email=ci@example.org", "-c", "user.name=CI")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=root, capture_output=True, text=True, check=True
    )
    return done.stdout


def steps() -> dict[str, dict[str, Any]]:
    """The workflow's steps by name."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return {
        step.get("name", step.get("uses", "")): step
        for step in workflow["jobs"]["snapshots"]["steps"]
    }


def run_step(name: str, checkout: Path, expressions: dict[str, str]) -> tuple[int, str, str]:
    """One step's `run` script, in bash as Actions runs it, with its `env` (GitHub expressions
    replaced by `expressions`); the exit code, the output and the step summary."""
    step = steps()[name]
    env = {**os.environ}
    for key, value in (step.get("env") or {}).items():
        for expression, replacement in expressions.items():
            value = str(value).replace("${{ " + expression + " }}", replacement)
        env[key] = value
    summary = checkout.parent / "step-summary.md"  # the runner's, outside the checkout
    summary.write_text("", encoding="utf-8")
    env["GITHUB_STEP_SUMMARY"] = str(summary)
    env["CI"] = "true"
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["PYTEST_ADDOPTS"] = "-p no:randomly -p no:hypothesispytest -p no:anyio"
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=checkout, env=env, capture_output=True, text=True
    )
    return done.returncode, done.stdout + done.stderr, summary.read_text(encoding="utf-8")


@pytest.fixture
def origin(project: EvalProject, tmp_path: Path) -> Path:
    """A bare origin whose `main` holds the default project, recorded."""
    git(project.root, "init", "-q", "-b", "main")
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=3)
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "recorded")
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(project.root, "remote", "add", "origin", str(bare))
    git(project.root, "push", "-q", "origin", "main")
    git(project.root, "checkout", "-q", "-b", "feature")
    return bare


def pull_request(project: EvalProject, origin: Path, tmp_path: Path, depth: int = 0) -> Path:
    """Push the feature branch, make GitHub's merge commit, and check it out as actions/checkout
    does (detached, whole history unless `depth`)."""
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "feature", "--allow-empty")
    git(project.root, "push", "-q", "-f", "origin", "feature")
    merger = tmp_path / "merger"
    git(tmp_path, "clone", "-q", str(origin), str(merger))
    git(merger, "checkout", "-q", "main")
    git(merger, "merge", "-q", "--no-ff", "-m", "Merge feature into main", "origin/feature")
    git(merger, "push", "-q", "-f", "origin", "HEAD:refs/pull/1/merge")
    checkout = tmp_path / "checkout"
    depth_args = ["--depth", str(depth)] if depth else []
    git(tmp_path, "clone", "-q", *depth_args, f"file://{origin}", str(checkout))
    git(checkout, "fetch", "-q", *depth_args, "origin", "refs/pull/1/merge")
    git(checkout, "checkout", "-q", "--detach", "FETCH_HEAD")
    return checkout


PR = "Prompts a pull request changes"
PR_EXPRESSIONS = {"github.base_ref": "main"}


def test_a_pull_request_that_touches_a_file_no_task_claims_checks_every_task(
    project: EvalProject, origin: Path, tmp_path: Path
) -> None:
    """Nothing shows that a new file cannot affect a prompt: every task is checked, and the
    header names the file and says how to declare it irrelevant."""
    (project.root / "NOTES.md").write_text("nothing to do with tasks\n", encoding="utf-8")
    checkout = pull_request(project, origin, tmp_path)
    code, output, _ = run_step(PR, checkout, PR_EXPRESSIONS)
    assert code == 0, output
    assert "3 tasks changed since origin/main" in output
    assert "1 changed file no task claims (NOTES.md)" in output
    assert "evaltasks_changed_ignore" in output
    assert "3 passed" in output


def test_a_pull_request_that_touches_only_ignored_files_is_green_at_once(
    project: EvalProject, origin: Path, tmp_path: Path
) -> None:
    git(project.root, "checkout", "-q", "main")
    (project.root / "pytest.ini").write_text(
        "[pytest]\nevaltasks_changed_ignore =\n    *.md\n    docs/\n", encoding="utf-8"
    )
    git(project.root, "add", "pytest.ini")
    git(project.root, "commit", "-qm", "declare the docs irrelevant")
    git(project.root, "push", "-q", "origin", "main")
    git(project.root, "checkout", "-q", "feature")
    git(project.root, "merge", "-q", "main")
    (project.root / "NOTES.md").write_text("nothing to do with tasks\n", encoding="utf-8")
    (project.root / "docs").mkdir()
    (project.root / "docs" / "guide.txt").write_text("a guide\n", encoding="utf-8")
    checkout = pull_request(project, origin, tmp_path)
    code, output, summary = run_step(PR, checkout, PR_EXPRESSIONS)
    assert code == 0, output
    assert "0 tasks changed since origin/main: nothing to check" in output
    assert "NOTES.md, docs/guide.txt changed, ignored by evaltasks_changed_ignore" in output
    assert "nothing to check" in summary


def test_a_pull_request_with_a_versioned_change_is_green_and_reported(
    project: EvalProject, origin: Path, tmp_path: Path
) -> None:
    project.write_tasks(
        'name="mytask:sub", version=1',
        'name="mytask:other", version=1, stop_sequence=["\\n"], generation_size=5',
        'name="solo", version=1, hf_avail_splits=["test"]',
        edited=(2,),
    )
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=3)
    checkout = pull_request(project, origin, tmp_path)
    code, output, summary = run_step(PR, checkout, PR_EXPRESSIONS)
    assert code == 0, output
    assert "mytask:sub" in summary and "changed since the base, versioned" in summary


def test_a_pull_request_with_an_unversioned_change_is_red_even_re_recorded(
    project: EvalProject, origin: Path, tmp_path: Path
) -> None:
    project.write_tasks(edited=(2,))
    snapshot = project.snapshot("mytask:sub|0")
    snapshot.unlink()  # deleted and re-recorded on the branch: the working copy agrees
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    checkout = pull_request(project, origin, tmp_path)
    code, output, summary = run_step(PR, checkout, PR_EXPRESSIONS)
    assert code == 1, output
    assert "changed since origin/main without a version bump" in output
    assert "mytask:sub" in summary


def test_a_shallow_checkout_is_a_usage_error_naming_fetch_depth(
    project: EvalProject, origin: Path, tmp_path: Path
) -> None:
    project.write_tasks(edited=(2,))
    checkout = pull_request(project, origin, tmp_path, depth=1)
    code, output, _ = run_step(PR, checkout, PR_EXPRESSIONS)
    assert code == pytest.ExitCode.USAGE_ERROR, output
    assert "fetch-depth" in output


def test_a_push_is_judged_against_the_commit_it_started_from(
    project: EvalProject, origin: Path, tmp_path: Path
) -> None:
    before = git(project.root, "rev-parse", "main").strip()
    project.write_tasks(edited=(2,))
    project.snapshot("mytask:sub|0").unlink()
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "laundered on main")
    git(project.root, "push", "-q", "origin", "HEAD:main")
    checkout = tmp_path / "pushed"
    git(tmp_path, "clone", "-q", "-b", "main", str(origin), str(checkout))
    code, output, _ = run_step("Every prompt, on a push", checkout, {"github.event.before": before})
    assert code == 1, output
    assert "changed since" in output and "without a version bump" in output
    new_branch, output, _ = run_step(
        "Every prompt, on a push", checkout, {"github.event.before": "0" * 40}
    )
    assert new_branch == 1, output  # a first push falls back to the previous commit


def test_the_documented_recipe_is_the_workflow_file() -> None:
    documented = section("docs/ci.md", "## In CI")
    assert WORKFLOW.read_text(encoding="utf-8").strip() in documented
