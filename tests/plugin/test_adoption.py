"""What a new user meets first: paths resolved as pytest resolves them, errors that name what
the user wrote, and commands that say when something they asked for is not there."""

from __future__ import annotations

import importlib.util
import textwrap
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject


def test_the_default_task_folder_is_the_root_directorys(project: EvalProject) -> None:
    project.pytester.makeini("[pytest]\n")
    deeper = project.root / "sub" / "deeper"
    deeper.mkdir(parents=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(deeper)
        result = project.pytester.runpytest_subprocess(
            "-p", "no:randomly", "--evaltasks", "solo", "--snapshot-update"
        )
    result.assert_outcomes(passed=1)
    assert project.snapshot("solo|0").exists()


def test_a_custom_task_file_alone_needs_no_task_folder(project: EvalProject) -> None:
    tasks = project.root / "tasks"
    custom = project.root / "community_tasks.py"
    custom.write_text((tasks / "demo.py").read_text(encoding="utf-8"), encoding="utf-8")
    (tasks / "demo.py").unlink()
    data = project.root / "data"
    (tasks / "data").rename(data)
    tasks.rmdir()
    result = project.run("--evaltasks-custom=community_tasks.py", "--evaltasks", "solo")
    result.assert_outcomes(failed=1)  # a new task: it ran
    assert "new task" in result.stdout.str()


def test_a_bad_ini_value_is_named_by_its_ini_key(project: EvalProject) -> None:
    project.pytester.makeini("[pytest]\nevaltasks_docs = many\n")
    result = project.run("--evaltasks", "solo")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*evaltasks_docs (ini) must be a whole number, got 'many'*"])
    cli = project.run("--evaltasks", "solo", "--evaltasks-docs=-1")
    cli.stderr.fnmatch_lines(["*--evaltasks-docs must be 0 or more*"])


def test_node_ids_that_name_no_item_are_a_usage_error(project: EvalProject) -> None:
    result = project.run("--evaltasks", "mytask", "evaltasks::mytask:sib|0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*has no item for node id*", "*evaltasks::mytask:sib|0 (did you mean mytask:sub|0?)*"]
    )


def test_show_says_when_ids_are_missing_and_a_failing_task_hides_no_other(
    project: EvalProject,
) -> None:
    project.write_tasks(
        'name="solo", version=0, hf_avail_splits=["test"]',
        'name="broken", version=0, hf_avail_splits=["test"], prompt_function=boom',
        header="def boom(row, task_name):\n    raise ValueError('no')\n",
    )
    result = project.run("--evaltasks", "broken,solo", "--evaltasks-show=1,40")
    assert result.ret == 1
    text = result.stdout.str()
    assert "=== broken|0: PromptFunctionError" in text
    assert "=== solo|0: 1 of 6 docs" in text and "no doc with id 40" in text


def test_lint_findings_are_shown_on_a_new_task(project: EvalProject) -> None:
    project.write_tasks(prefix="Q ", prompt_body=textwrap.indent(
        'return Doc(query=f"{PREFIX}{row[\'q\']} ", choices=[" a", " a"], gold_index=0)', "    "
    ))  # fmt: skip
    result = project.run("--evaltasks", "solo")
    result.assert_outcomes(failed=1)
    failure = project.failures(result)
    assert "new task" in failure and "lint findings:" in failure
    assert "duplicate-choices" in failure


def test_a_broken_modules_snapshots_are_not_offered_for_deletion(project: EvalProject) -> None:
    project.write_tasks('name="other_module", version=0', module="more")
    project.run("--evaltasks", "all", "--snapshot-update")
    (project.root / "tasks" / "more.py").write_text("raise RuntimeError('boom')\n", "utf-8")
    result = project.run("--evaltasks", "all")
    text = result.stdout.str()
    assert "orphan snapshot" not in text
    assert "may be its tasks'; they are not checked until it imports" in text
    project.run("--evaltasks", "all", "--snapshot-update")
    assert project.snapshot("other_module|0").exists()


def test_a_missing_few_shot_split_names_hf_avail_splits(project: EvalProject) -> None:
    (project.root / "tasks" / "data" / "demo" / "main" / "train.jsonl").unlink()
    result = project.run("--evaltasks", "mytask:sub|2")
    result.assert_outcomes(failed=1)
    failure = project.failures(result)
    assert "was picked from hf_avail_splits" in failure and "few_shots_split" in failure


@pytest.mark.skipif(
    importlib.util.find_spec("lighteval") is not None, reason="lighteval is installed here"
)
def test_the_lighteval_shortcut_without_lighteval_says_so(project: EvalProject) -> None:
    result = project.run("--evaltasks-dir=lighteval:tasks", "--evaltasks", "solo")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*lighteval:tasks: lighteval is not installed here*"])


def test_local_only_checks_the_tasks_with_local_data_and_says_what_it_left_out(
    project: EvalProject,
) -> None:
    project.write_tasks(
        'name="solo", version=0, hf_avail_splits=["test"]',
        'name="hubbed", version=0, hf_repo="org/not-here", hf_avail_splits=["test"]',
    )
    project.run("--evaltasks", "solo", "--snapshot-update").assert_outcomes(passed=1)
    result = project.run("--evaltasks", "solo,hubbed", "--evaltasks-local-only")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["*1 task left out, their data is not in the local data root*", "*hubbed|0*"]
    )
    plain = project.run("--evaltasks", "solo,hubbed")
    assert plain.parseoutcomes().get("failed") == 1  # never the default


def test_lint_rules_are_silenced_per_task_pattern_in_the_ini_file(project: EvalProject) -> None:
    project.write_tasks(prompt_body=textwrap.indent(
        'return Doc(query=f"{PREFIX}{row[\'q\']}", choices=[" a", " a"], gold_index=0)', "    "
    ))  # fmt: skip
    project.run("--evaltasks", "solo", "--snapshot-update")
    noisy = project.run("--evaltasks", "solo", "-W", "error::UserWarning")
    assert "duplicate-choices" in noisy.stdout.str()
    project.pytester.makeini("[pytest]\nevaltasks_lint_ignore =\n    sol* duplicate-choices\n")
    quiet = project.run("--evaltasks", "solo")
    assert "duplicate-choices" not in quiet.stdout.str()
    project.pytester.makeini("[pytest]\nevaltasks_lint_ignore =\n    solo no-such-rule\n")
    bad = project.run("--evaltasks", "solo")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*unknown rule(s) no-such-rule*"])
