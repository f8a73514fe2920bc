"""The CI and authoring workflow end to end: changed-only runs, the Markdown report, showing
prompts, and linting them."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

GIT_IDENTITY = ("-c", "user.email=ci@example.org", "-c", "user.name=CI")

HELPER_USER = """\
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics
{import_line}


def prompt(row, task_name):
    return Doc(query=PREFIX + row["q"] + "\\nA:", choices=[" yes", " no"], gold_index=row["label"])


TASKS_TABLE = [LightevalTaskConfig(name="{name}", prompt_function=prompt, hf_repo="demo",
               hf_subset="main", metrics=[Metrics.loglikelihood_acc], evaluation_splits=["test"],
               few_shots_split="train")]
"""


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=root, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def repo(project: EvalProject) -> EvalProject:
    """Three task modules, two of them importing one helper package module, all recorded and
    committed in a throwaway git repository."""
    tasks = project.root / "tasks"
    (tasks / "demo.py").unlink()
    (tasks / "helpers").mkdir()
    (tasks / "helpers" / "mcq.py").write_text('PREFIX = "Q: "\n', encoding="utf-8")
    (tasks / "helpers" / "unused.py").write_text("X = 1\n", encoding="utf-8")
    for name, import_line in (
        ("arc", "from .helpers.mcq import PREFIX"),
        ("openbookqa", "from .helpers import mcq\nPREFIX = mcq.PREFIX"),
        ("third", 'PREFIX = "Q: "'),
    ):
        text = HELPER_USER.format(name=name, import_line=import_line)
        (tasks / f"{name}.py").write_text(text, encoding="utf-8")
    git(project.root, "init", "-q")
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=3)
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "tasks and snapshots")
    return project


def test_changed_selects_exactly_the_tasks_a_helper_change_affects(repo: EvalProject) -> None:
    (repo.root / "tasks" / "helpers" / "mcq.py").write_text('PREFIX = "Question: "\n', "utf-8")
    result = repo.run("--evaltasks", "all", "--evaltasks-changed")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "evaltasks: 2 tasks changed since the merge base with master (*): "
            "tasks/helpers/mcq.py changed (arc, openbookqa)",
            "FAILED evaltasks::arc|0 - *",
            "FAILED evaltasks::openbookqa|0 - *",
        ]
    )
    alone = repo.run("--evaltasks-changed", "--collect-only", "-q")  # alone it means `all`
    alone.stdout.fnmatch_lines(
        ["evaltasks::arc|0", "evaltasks::openbookqa|0", "2 tests collected*"]
    )


def test_changed_counts_modules_data_snapshots_and_new_tasks(repo: EvalProject) -> None:
    none = repo.run("--evaltasks-changed", "-q")
    assert none.ret == pytest.ExitCode.OK  # nothing to check is a success
    none.stdout.fnmatch_lines(["*0 tasks changed since the merge base*: nothing to check*"])
    (repo.root / "tasks" / "third.py").write_text(
        (repo.root / "tasks" / "third.py").read_text("utf-8") + "\n# touched\n", "utf-8"
    )
    one = repo.run("--evaltasks-changed", "--collect-only", "-q")
    one.stdout.fnmatch_lines(["evaltasks::third|0", "1 test collected*"])
    git(repo.root, "commit", "-qam", "touch third")
    data = repo.root / "tasks" / "data" / "demo" / "main" / "test.jsonl"
    data.write_text(data.read_text("utf-8") + '{"q": "new", "label": 0}\n', "utf-8")
    all_three = repo.run("--evaltasks-changed=HEAD~1", "--collect-only", "-q")
    all_three.stdout.fnmatch_lines(["*3 tests collected*"])  # third (committed) + data (all)
    git(repo.root, "checkout", "-q", "--", ".")
    snapshot = next((repo.root / "tasks" / "__snapshots__").glob("arc-0--*.txt"))
    snapshot.write_text(snapshot.read_text("utf-8").replace("| Q:", "| Q:  ", 1), "utf-8")
    edited = repo.run("--evaltasks-changed", "--collect-only", "-q")
    edited.stdout.fnmatch_lines(["evaltasks::arc|0", "1 test collected*"])
    git(repo.root, "checkout", "-q", "--", ".")
    new = repo.root / "tasks" / "fresh.py"
    new.write_text(HELPER_USER.format(name="fresh", import_line='PREFIX = "F: "'), "utf-8")
    added = repo.run("--evaltasks-changed", "--collect-only", "-q")
    added.stdout.fnmatch_lines(["evaltasks::fresh|0", "1 test collected*"])


def test_changed_without_git_or_with_an_unknown_ref_is_a_usage_error(
    project: EvalProject,
) -> None:
    result = project.run("--evaltasks", "all", "--evaltasks-changed")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--evaltasks-changed: *not inside a git repository*"])
    git(project.root, "init", "-q")
    unknown = project.run("--evaltasks", "all", "--evaltasks-changed=no-such-branch")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    unknown.stderr.fnmatch_lines(["*'no-such-branch' is not a revision*"])


def test_the_default_ref_is_the_merge_base_with_the_tracked_branch(repo: EvalProject) -> None:
    git(repo.root, "branch", "-q", "-m", "main")
    git(repo.root, "checkout", "-q", "-b", "feature")
    git(repo.root, "branch", "-q", "--set-upstream-to=main")
    (repo.root / "tasks" / "helpers" / "mcq.py").write_text('PREFIX = "A: "\n', "utf-8")
    git(repo.root, "commit", "-qam", "feature change")
    result = repo.run("--evaltasks-changed", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["evaltasks::arc|0", "evaltasks::openbookqa|0"])
    header = repo.run("--evaltasks-changed", "--collect-only")
    header.stdout.fnmatch_lines(["*changed since the merge base with main*"])


# --- the report ------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_the_report_holds_a_table_and_collapsed_diffs(
    project: EvalProject, workers: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    project.run("--evaltasks", "mytask,solo", "--snapshot-update").assert_outcomes(passed=3)
    project.write_tasks(edited=(2,))
    summary = project.root / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = project.run(
        "--evaltasks", "mytask,solo,mytask:sub|1", "--evaltasks-report=out/report.md", *workers
    )
    result.assert_outcomes(failed=4)
    text = (project.root / "out" / "report.md").read_text(encoding="utf-8")
    assert summary.read_text(encoding="utf-8") == text
    assert "| task | result | outcome | changed docs | version |" in text
    assert (  # the three that changed the same way: one row, one block
        "| `mytask:other\\|0` and 2 more: 3 tasks changed the same way (one block below) | "
        "failed | changed without a version bump | 3 | 0 → 0 |" in text
    )
    assert "| `solo\\|0` |" not in text
    assert "| `mytask:sub\\|1` | failed | new |" in text
    assert (
        "<details><summary>3 tasks changed the same way (<code>A:</code> → "
        "<code>A: (edited)</code>): changed without a version bump</summary>" in text
    )
    assert "Tasks: `mytask:other|0`, `mytask:sub|0`, `solo|0`" in text
    assert "\n+| A: (edited)\n" in text

    update = project.run(
        "--evaltasks", "mytask:sub|1", "--snapshot-update", "--evaltasks-report=update.md"
    )
    update.assert_outcomes(passed=1)
    written = (project.root / "update.md").read_text(encoding="utf-8")
    assert "(update mode)" in written and "| new (written) |" in written


def test_junit_properties_are_json(project: EvalProject) -> None:
    result = project.run("--evaltasks", "solo", "--snapshot-update", "--junitxml=junit.xml")
    result.assert_outcomes(passed=1)
    tree = ET.parse(project.root / "junit.xml")
    (prop,) = [p for p in tree.iter("property") if p.get("name") == "evaltasks"]
    data = json.loads(prop.get("value") or "")
    assert data["label"] == "solo|0" and data["outcome"] == "new" and data["written"] is True


# --- showing prompts -------------------------------------------------------------------------


def test_show_prints_prompts_and_touches_no_snapshot(project: EvalProject) -> None:
    result = project.run("--evaltasks", "mytask:sub|2", "--evaltasks-show")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "=== mytask:sub|2: 3 of 6 docs (version 0)",
            "*doc 1 of 6] id=*",
            "fewshot_ids: *, *",
            'choices: [" yes", " no"]',
            "golds: *",
            "--- prompt (plain text) ---",
            "| Q: train *",
        ]
    )
    assert not project.snapshot_dir.exists()
    by_id = project.run("--evaltasks", "mytask:sub", "--evaltasks-show=4,1,99")
    assert by_id.ret == 1  # an id asked for is missing
    out = by_id.stdout.str()
    assert "] id=4" in out and "] id=1" in out and "no doc with id 99" in out
    chat = project.run(
        "--evaltasks", "solo", "--evaltasks-show=1", "--evaltasks-chat-template=chatml",
        "--evaltasks-system-prompt", "Be brief.",
    )  # fmt: skip
    chat.stdout.fnmatch_lines(
        ["| Be brief.", "--- prompt (chat template chatml) ---", "| <|im_start|>system"]
    )
    assert not project.snapshot_dir.exists()


# --- lint ------------------------------------------------------------------------------------

SPACED = """\
    return Doc(query=f"{PREFIX}{row['q']}\\nAnswer: ", choices=[" yes", " yes"],
               gold_index=row["label"])"""


SCORED_SOLO = (
    'name="solo", version=0, hf_avail_splits=["test"], metrics=[Metrics.loglikelihood_acc]'
)


@pytest.mark.parametrize("how", ["option", "ini"])
def test_lint_warns_fails_or_stays_quiet(project: EvalProject, how: str) -> None:
    project.write_tasks(SCORED_SOLO, prompt_body=SPACED)
    project.run("--evaltasks", "solo", "--snapshot-update").assert_outcomes(passed=1, warnings=3)

    warned = project.run("--evaltasks", "solo")
    warned.assert_outcomes(passed=1, warnings=3)
    warned.stdout.fnmatch_lines(
        [
            "*EvalTasksLintWarning: lint double-space-at-join: *(6 docs: *",
            "*EvalTasksLintWarning: lint trailing-space: *",
            "*EvalTasksLintWarning: lint duplicate-choices: *",
        ]
    )
    if how == "ini":
        project.pytester.makeini("[pytest]\nevaltasks_lint = error\n")
        failed = project.run("--evaltasks", "solo")
    else:
        failed = project.run("--evaltasks", "solo", "--evaltasks-lint")
    failed.assert_outcomes(failed=1)
    failure = project.failures(failed)
    assert "3 lint finding(s)" in failure and "duplicate-choices" in failure
    assert "evaltasks_lint_ignore" in failure
    quiet = project.run("--evaltasks", "solo", "--evaltasks-lint=off")
    quiet.assert_outcomes(passed=1)


def test_lint_rules_are_silenced_per_task_and_named_in_the_report(project: EvalProject) -> None:
    project.write_tasks(
        SCORED_SOLO,
        prompt_body=SPACED,
        header='evaltasks_lint_ignore = {"solo": ["trailing-space", "double-space-at-join"], '
        '"*": ["no-such-rule"]}',
    )
    result = project.run("--evaltasks", "solo", "--snapshot-update", "--evaltasks-report=r.md")
    result.assert_outcomes(passed=1, warnings=2)
    out = result.stdout.str()
    assert "duplicate-choices" in out and "trailing-space:" not in out
    assert "unknown lint rule 'no-such-rule'" in out
    report = (project.root / "r.md").read_text(encoding="utf-8")
    assert "### Lint findings" in report and "- `solo|0`: duplicate-choices:" in report
