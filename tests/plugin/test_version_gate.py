"""The version gate: a content change under an unchanged `version` is refused."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from pytest_evaltasks.snapshot.facts import FORMAT_VERSION

if TYPE_CHECKING:
    from conftest import EvalProject

SUB = "mytask:sub|0"
BUMPED_SUB = (
    'name="mytask:sub", version=1',
    'name="mytask:other", version=0, stop_sequence=["\\n"], generation_size=5',
    'name="solo", version=0, hf_avail_splits=["test"]',
)


def test_whole_cycle_edit_fails_then_bump_update_and_pass(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    path = project.snapshot(SUB)
    recorded = path.read_bytes()

    # 1. Edit the prompt function so that exactly doc 2 changes.
    project.write_tasks(edited=(2,))
    compare = project.run("--evaltasks", "mytask:sub")
    compare.assert_outcomes(failed=1)
    failure = project.failures(compare)
    assert "1 of 6 docs changed (id 2)" in failure
    assert "its version is still 0" in failure
    assert "bump the task's `version`" in failure
    assert "(edited)" in failure  # the diff shows the changed prompt
    assert "Traceback" not in failure and "_pytest" not in failure

    # 2. Updating without a bump is refused and leaves the file as it was.
    refused = project.run("--evaltasks", "mytask:sub", "--snapshot-update")
    refused.assert_outcomes(failed=1)
    assert "the update is refused" in project.failures(refused)
    assert path.read_bytes() == recorded

    # 3. Bump the version: compare still fails, now as a reviewable, versioned diff.
    project.write_tasks(*BUMPED_SUB, edited=(2,))
    versioned = project.run("--evaltasks", "mytask:sub")
    versioned.assert_outcomes(failed=1)
    failure = project.failures(versioned)
    assert "version 0 -> 1" in failure
    assert "1 of 6 docs changed (id 2)" in failure
    assert "bump the task" not in failure
    assert path.read_bytes() == recorded

    # 4. Update records it; compare then passes.
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    updated = path.read_text(encoding="utf-8")
    assert "version: 1" in updated
    assert "| Q: question 2 ¿qué?\n| A: (edited)\n" in updated  # doc 2 is among those shown
    project.run("--evaltasks", "mytask:sub").assert_outcomes(passed=1)


def test_allow_unversioned_lets_the_update_through(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    path = project.snapshot(SUB)
    recorded = path.read_bytes()
    project.write_tasks(edited=(1, 4))
    allowed = project.run(
        "--evaltasks", "mytask:sub", "--snapshot-update", "--evaltasks-allow-unversioned"
    )
    allowed.assert_outcomes(passed=1)
    assert path.read_bytes() != recorded
    assert "version: 0" in path.read_text(encoding="utf-8")
    project.run("--evaltasks", "mytask:sub").assert_outcomes(passed=1)


def test_version_only_bump_is_a_diff_then_an_update_with_a_warning(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    project.write_tasks(*BUMPED_SUB)
    compare = project.run("--evaltasks", "mytask:sub")
    compare.assert_outcomes(failed=1)
    failure = project.failures(compare)
    assert "no prompt, field or setting changed; version 0 -> 1" in failure
    assert "bump" not in failure

    update = project.run("--evaltasks", "mytask:sub", "--snapshot-update")
    update.assert_outcomes(passed=1, warnings=1)
    update.stdout.fnmatch_lines(["*EvalTasksWarning: version 0 -> 1 but no content changed*"])
    assert "version: 1" in project.snapshot(SUB).read_text(encoding="utf-8")


def test_settings_change_is_named_and_not_an_unversioned_prompt_change(
    project: EvalProject,
) -> None:
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    recorded = project.snapshot(SUB).read_bytes()
    result = project.run("--evaltasks", "mytask:sub", "--evaltasks-system-prompt", "Be brief.")
    result.assert_outcomes(failed=1)
    failure = project.failures(result)
    assert 'system_prompt: null -> "Be brief."' in failure
    assert "the task's content is unchanged" in failure
    assert "bump" not in failure and "version is still" not in failure
    result.stdout.no_fnmatch_line("*need a version bump*")
    assert project.snapshot(SUB).read_bytes() == recorded


@pytest.mark.parametrize(
    ("line", "says"),
    [
        pytest.param("format 6", "written by a newer pytest-evaltasks (format 6", id="newer"),
        pytest.param("format 99", "written by a newer pytest-evaltasks (format 99", id="unknown"),
        pytest.param("format 1", "format 1, whose content this version cannot verify", id="old"),
        pytest.param("format 2", "edited by hand", id="older"),
        pytest.param("format 3", "edited by hand", id="format-3"),
        pytest.param("format 4", "edited by hand", id="previous"),
        pytest.param("format x", "declares format 'x'", id="garbage"),
    ],
)
def test_the_format_line_can_never_launder_a_change(
    project: EvalProject, line: str, says: str
) -> None:
    """A relabelled format is refused, never rewritten: a rewrite would record whatever the
    prompt function now builds, unversioned changes included."""
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    path = project.snapshot(SUB)
    recorded = path.read_text(encoding="utf-8")
    first, rest = recorded.split("\n", 1)
    assert first == f"# pytest-evaltasks snapshot, format {FORMAT_VERSION}"
    relabelled = f"# pytest-evaltasks snapshot, {line}\n" + rest
    path.write_text(relabelled, encoding="utf-8")
    project.write_tasks(edited=(4,))  # an unversioned prompt change rides along
    for mode in ((), ("--snapshot-update",)):
        result = project.run("--evaltasks", "mytask:sub", *mode)
        result.assert_outcomes(failed=1)
        failure = project.failures(result)
        assert says in failure
        assert "snapshot format changed" not in result.stdout.str()
        assert path.read_text(encoding="utf-8") == relabelled


def test_header_content_change_under_same_version_is_refused(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask", "--snapshot-update").assert_outcomes(passed=2)
    recorded = project.snapshots()
    project.write_tasks(
        'name="mytask:sub", version=0, metrics=[Metrics.exact_match, Metrics.loglikelihood_acc]',
        'name="mytask:other", version=0, stop_sequence=["\\n", "###"], generation_size=5',
    )
    compare = project.run("--evaltasks", "mytask")
    compare.assert_outcomes(failed=2)
    failure = project.failures(compare)
    assert (
        "metrics: exact_match [em; GENERATIVE] -> exact_match [em; GENERATIVE], "
        "loglikelihood_acc [acc; LOGPROBS]" in failure
    )
    assert 'stop_sequences: ["\\n"] -> ["\\n", "###"]' in failure
    assert failure.count("bump the task's `version`") == 2

    refused = project.run("--evaltasks", "mytask", "--snapshot-update")
    refused.assert_outcomes(failed=2)
    assert project.failures(refused).count("the update is refused") == 2
    assert project.snapshots() == recorded


def test_settings_change_does_not_hide_unversioned_content_change(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask:other", "--snapshot-update").assert_outcomes(passed=1)
    recorded = project.snapshots()
    project.write_tasks(
        'name="mytask:other", version=0, stop_sequence=["\\n", "###"], generation_size=5'
    )
    result = project.run(
        "--evaltasks", "mytask:other", "--snapshot-update", "--evaltasks-system-prompt", "Hi."
    )
    result.assert_outcomes(failed=1)
    assert project.snapshots() == recorded


def test_new_task_just_gets_its_snapshot(project: EvalProject) -> None:
    project.write_tasks('name="mytask:sub", version=0')
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    recorded = project.snapshots()
    project.write_tasks()
    result = project.run("--evaltasks", "mytask:sub,solo", "--snapshot-update")
    result.assert_outcomes(passed=2)
    result.stdout.no_fnmatch_line("*version*")
    assert project.snapshot("solo|0").is_file()
    assert {k: v for k, v in project.snapshots().items() if k in recorded} == recorded


def test_edit_within_the_same_second_is_seen(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    module = project.root / "tasks" / "demo.py"
    stat = module.stat()
    # `version=0` -> `version=1`: same size; same mtime, as an edit in the same second has.
    project.write_tasks(*BUMPED_SUB)
    assert module.stat().st_size == stat.st_size
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    result = project.run("--evaltasks", "mytask:sub")
    result.assert_outcomes(failed=1)
    assert "version 0 -> 1" in project.failures(result)
