"""`--evaltasks-report` end to end: what reaches the report, and where it cannot be written."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

BROKEN_MODULE = "import nope_not_a_module_anywhere\n"
WITHOUT_SOLO = (
    'name="mytask:sub", version=0',
    'name="mytask:other", version=0, stop_sequence=["\\n"], generation_size=5',
)


def _recorded(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask,solo", "--snapshot-update").assert_outcomes(passed=3)


def test_a_broken_modules_traceback_and_an_orphans_reason_reach_the_report(
    project: EvalProject,
) -> None:
    _recorded(project)
    project.write_tasks(*WITHOUT_SOLO)  # solo's snapshot is now an orphan
    (project.root / "tasks" / "broken.py").write_text(BROKEN_MODULE, encoding="utf-8")
    result = project.run("--evaltasks", "all", "--evaltasks-report=r.md")
    result.assert_outcomes(passed=2, failed=1)  # solo's snapshot may be the broken module's
    text = (project.root / "r.md").read_text(encoding="utf-8")
    module = text[text.index("<details><summary><code>tasks/broken.py</code>") :]
    module = module[: module.index("</details>")]
    assert "Traceback (most recent call last):" in module
    assert "ModuleNotFoundError: No module named 'nope_not_a_module_anywhere'" in module
    assert "may be its tasks'; they are not checked until it imports: solo-0" in module
    (project.root / "tasks" / "broken.py").unlink()
    alone = project.run("--evaltasks", "all", "--evaltasks-report=r.md")
    alone.assert_outcomes(passed=2, failed=1)
    text = (project.root / "r.md").read_text(encoding="utf-8")
    orphan = text[text.index("<details><summary><code>tasks/__snapshots__/solo-0") :]
    orphan = orphan[: orphan.index("</details>")]
    assert "why it is an orphan: it records task 'solo', which is not registered" in orphan
    assert "- 2 tasks from `all` and 1 orphan snapshot" in text


def test_the_report_is_the_same_with_xdist(project: EvalProject) -> None:
    _recorded(project)
    project.write_tasks(edited=(2, 4))
    (project.root / "tasks" / "broken.py").write_text(BROKEN_MODULE, encoding="utf-8")
    args = ("--evaltasks", "all", "--evaltasks", "mytask:sub|1,solo|1")
    serial = project.run(*args, "--evaltasks-report=serial.md", "-p", "no:xdist")
    serial.assert_outcomes(failed=6)
    parallel = project.run(*args, "--evaltasks-report=xdist.md", "-n", "2")
    parallel.assert_outcomes(failed=6)
    text = (project.root / "serial.md").read_text(encoding="utf-8")
    assert (project.root / "xdist.md").read_text(encoding="utf-8") == text
    assert "\n+| A: (edited)\n" in text and "\n-| A:\n" in text  # + and - at column 0
    assert "\n  +|" not in text and "\n  -|" not in text
    assert "\n```diff\n" in text


def test_a_step_summary_in_a_missing_folder_is_a_usage_error(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    _recorded(project)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(project.root / "missing" / "summary.md"))
    result = project.run("--evaltasks", "mytask", "--evaltasks-report=r.md")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output
    result.stderr.fnmatch_lines(["*GITHUB_STEP_SUMMARY=*summary.md: its folder * does not exist*"])
    assert not (project.root / "r.md").exists()


def test_a_report_path_that_is_a_folder_is_a_usage_error(project: EvalProject) -> None:
    _recorded(project)
    (project.root / "out").mkdir()
    result = project.run("--evaltasks", "mytask", "--evaltasks-report=out")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.stderr.fnmatch_lines(["*--evaltasks-report=out: that is a directory; name a file*"])


WRITE_FAILS_LATER = """\
import os


def pytest_collection_finish(session):
    os.mkdir("late.md")  # after the up-front check: the write at the end fails
"""


def test_a_write_that_fails_at_the_end_is_said_and_keeps_the_exit_code(
    project: EvalProject,
) -> None:
    _recorded(project)
    (project.root / "conftest.py").write_text(WRITE_FAILS_LATER, encoding="utf-8")
    result = project.run("--evaltasks", "mytask", "--evaltasks-report=late.md")
    assert result.ret == pytest.ExitCode.OK
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["evaltasks: error: the report was not written: *late.md*"])
    result.stdout.fnmatch_lines(["2 tasks checked, 12 docs rendered"])


def test_a_changed_run_that_selects_nothing_says_so(project: EvalProject) -> None:
    def git(*args: str) -> None:
        identity = ("-c", "user.email=ci@example.org", "-c", "user.name=CI")
        subprocess.run(["git", *identity, *args], cwd=project.root, check=True, capture_output=True)

    git("init", "-q")
    _recorded(project)
    git("add", "-A")
    git("commit", "-qm", "tasks")
    result = project.run("--evaltasks-changed=HEAD", "--evaltasks-report=r.md")
    assert result.ret == pytest.ExitCode.OK
    text = (project.root / "r.md").read_text(encoding="utf-8")
    assert "0 tasks changed since HEAD: nothing to check" in text
    assert "| task |" not in text


def test_a_doubled_space_and_a_zero_width_space_show_in_the_failure_and_the_report(
    project: EvalProject,
) -> None:
    _recorded(project)
    for prefix, shown in (("Q:  ", "?     ^"), ("Q:\u200b ", "Q:⟨U+200B⟩")):
        project.write_tasks(prefix=prefix)
        result = project.run("--evaltasks", "solo", "--evaltasks-report=r.md")
        result.assert_outcomes(failed=1)
        failure = project.failures(result)
        report = (project.root / "r.md").read_text(encoding="utf-8")
        for text in (failure, report):
            assert shown in text, text
            assert "-vv" not in text


def test_a_field_change_shows_its_hidden_characters(project: EvalProject) -> None:
    project.write_tasks('name="solo", version=0, hf_avail_splits=["test"], stop_sequence=["\\n"]')
    project.run("--evaltasks", "solo", "--snapshot-update").assert_outcomes(passed=1)
    project.write_tasks(
        'name="solo", version=0, hf_avail_splits=["test"], stop_sequence=["\\n\\u200b"]'
    )
    result = project.run("--evaltasks", "solo")
    result.assert_outcomes(failed=1)
    failure = project.failures(result)
    assert "task fields changed:" in failure and "⟨U+200B⟩" in failure
    assert "\u200b" not in failure
