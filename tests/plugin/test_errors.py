"""Mistakes reach the user as usage errors or one clear message, never as pytest internals."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

# The prompt function leaves a marker file behind when it is ever called.
MARKING_PROMPT = """\
    open(MARKER, "a").close()
    return Doc(query=PREFIX + row["q"], choices=[" yes", " no"], gold_index=row["label"])"""
MARKER_HEADER = 'MARKER = __file__ + ".called"'

RAISING_PROMPT = """\
    if row["__index"] == 3 and not row["__few_shots"]:
        raise ValueError("cannot handle this row")
    return Doc(query=PREFIX + row["q"], choices=[" yes", " no"], gold_index=row["label"])"""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ("--evaltasks", "solo|x"),
            ["*'solo|x'*few-shot count 'x' is not an integer*accepted forms*"],
        ),
        (
            ("--evaltasks", "nope1, mytsk|1, solo, slo"),
            [
                "*unknown tasks:",
                "*'nope1'",
                "*'mytsk' (did you mean mytask*",
                "*'slo' (did you mean solo*",
                "accepted forms*",
            ],
        ),
        (
            ("--evaltasks", "solo@k|0"),
            ["*metric parameter 'k' is not of the form key=value*"],
        ),
        (
            ("--evaltasks", "solo", "--evaltasks-chat-template", "no-such-template"),
            ["*--evaltasks-chat-template*no-such-template*"],
        ),
    ],
    ids=["fewshot-count", "unknown-names", "bad-param", "chat-template"],
)
def test_bad_requests_are_usage_errors_before_any_work(
    project: EvalProject, args: tuple[str, ...], expected: list[str]
) -> None:
    project.write_tasks(prompt_body=MARKING_PROMPT, header=MARKER_HEADER)
    result = project.run(*args, "--snapshot-update")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0].startswith("ERROR: ")
    result.stderr.fnmatch_lines(expected)
    assert not (project.root / "tasks" / "demo.py.called").exists(), "a prompt function ran"
    assert not project.snapshot_dir.exists()
    result.stdout.no_fnmatch_line("*Traceback*")
    result.stderr.no_fnmatch_line("*Traceback*")


def test_prompt_function_error_is_one_clear_message(project: EvalProject) -> None:
    project.write_tasks('name="boom"', module="boom", prompt_body=RAISING_PROMPT)
    result = project.run("--evaltasks", "boom,solo", "--snapshot-update")
    result.assert_outcomes(passed=1, failed=1)
    failure = project.failures(result)
    assert "PromptFunctionError: task 'boom': prompt function prompt" in failure
    assert "raised ValueError: cannot handle this row on split 'test', row 3" in failure
    assert "question 3" in failure  # a preview of the row
    assert "boom.py" in failure
    for internal in ("_pytest", "pluggy", "syrupy", "runtest"):
        assert internal not in failure, f"{internal} in the failure text"
    assert len(failure.splitlines()) < 40
    assert not project.snapshot("boom|0").exists()
    assert project.snapshot("solo|0").exists()


def test_a_wrongly_typed_inputs_declaration_is_one_clear_message(project: EvalProject) -> None:
    project.write_tasks('name="declared"', module="declared", header="evaltasks_inputs = 3")
    result = project.run("--evaltasks", "declared,solo", "--snapshot-update")
    result.assert_outcomes(passed=1, failed=1)
    failure = project.failures(result)
    assert "task 'declared': evaltasks_inputs in" in failure
    assert "declared.py must be a list of paths or glob patterns" in failure
    assert "not 3" in failure
    assert not project.snapshot("declared|0").exists()


def test_corrupted_snapshot_is_reported_and_never_overwritten(project: EvalProject) -> None:
    """An unreadable snapshot cannot be compared, so recording over it would bypass the gate."""
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    path = project.snapshot("mytask:sub|0")
    good = path.read_bytes()
    corrupted = good[:40] + b"\xff\xfe\x80 garbage\n"
    path.write_bytes(corrupted)

    for mode in ((), ("--snapshot-update",)):
        result = project.run("--evaltasks", "mytask:sub", *mode)
        result.assert_outcomes(failed=1)
        failure = project.failures(result)
        where = path.relative_to(project.root).as_posix()
        assert f"snapshot file {where} is not valid UTF-8" in failure
        assert f"restore it from version control (git checkout -- {where})" in failure
        assert "delete" not in failure
        assert "Traceback" not in result.stdout.str() and "UnicodeDecodeError" not in failure
        result.stdout.no_fnmatch_line("*INTERNALERROR*")
        assert path.read_bytes() == corrupted

    path.unlink()
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    assert path.read_bytes() == good


def test_conflict_markers_are_reported_with_what_to_do(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    path = project.snapshot("mytask:sub|0")
    text = path.read_text(encoding="utf-8")
    merged = text.replace(
        "version: 0\n", "<<<<<<< HEAD\nversion: 0\n=======\nversion: 1\n>>>>>>> b\n"
    )
    path.write_text(merged, encoding="utf-8")
    for mode in ((), ("--snapshot-update",)):
        result = project.run("--evaltasks", "mytask:sub", *mode)
        result.assert_outcomes(failed=1)
        failure = project.failures(result)
        assert "unresolved git conflict markers" in failure
        assert "take either side of the conflict" in failure
        assert "let the gate say what to bump" in failure
        assert "delete" not in failure  # deleting and re-recording would launder the change
    assert path.read_text(encoding="utf-8") == merged


def test_list_groups_tasks_by_module_with_versions_and_recorded_shots(
    project: EvalProject,
) -> None:
    project.write_tasks('name="other_module", version=21', module="more")
    project.run("--evaltasks", "solo|0,solo|2", "--snapshot-update").assert_outcomes(passed=2)
    result = project.run("--evaltasks-list")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "4 tasks in 2 modules (4 tasks registered in 2 modules)",
            "tasks/demo.py:",
            "  mytask:other *version 0 *snapshots: -",
            "  mytask:sub *version 0 *snapshots: -",
            "  solo *version 0 *snapshots: 0, 2",
            "tasks/more.py:",
            "  other_module *version 21 *snapshots: -",
        ]
    )
    result.stdout.no_fnmatch_line("*passed*")
    narrowed = project.run("--evaltasks-list", "mytask")
    narrowed.stdout.fnmatch_lines(["2 tasks in 1 module matching 'mytask'*"])
    narrowed.stdout.no_fnmatch_line("*solo*")
    prefix = project.run("--evaltasks-list", "other_")
    prefix.stdout.fnmatch_lines(["1 task in 1 module matching 'other_'*", "  other_module *"])


def test_list_exits_non_zero_when_a_module_is_broken(project: EvalProject) -> None:
    broken = project.root / "tasks" / "broken.py"
    broken.write_text('raise RuntimeError("half-written task file")\n', encoding="utf-8")
    result = project.run("--evaltasks-list")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["failed to import: tasks/broken.py: RuntimeError: half-written task file"]
    )


def test_broken_task_module_is_named_and_other_tasks_still_run(project: EvalProject) -> None:
    broken = project.root / "tasks" / "broken.py"
    broken.write_text(
        "from pytest_evaltasks import LightevalTaskConfig\n"
        'raise RuntimeError("half-written task file")\n',
        encoding="utf-8",
    )
    for extra in ((), ("-W", "error")):  # a header line, not a warning: -W error cannot crash
        result = project.run("--evaltasks", "mytask", "--snapshot-update", *extra)
        assert result.ret == pytest.ExitCode.OK
        result.assert_outcomes(passed=2)
        result.stdout.fnmatch_lines(
            [
                "evaltasks: 1 task module failed to import*",
                "  tasks/broken.py: RuntimeError: half-written task file",
            ]
        )
        result.stdout.no_fnmatch_line("*INTERNALERROR*")

    missing = project.run("--evaltasks", "broken_task")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines(["*'broken_task'*", "*failed to import*", f"*{broken}*"])


@pytest.mark.parametrize("name", ["TASK_TABLE", "tasks_table", "TASKS_TABEL"])
def test_a_misspelt_table_is_named_with_what_to_do(project: EvalProject, name: str) -> None:
    """A task module whose table has a near-miss name is not skipped in silence: it fails as
    a broken module that names the spelling; a helper module with no table is left alone."""
    (project.root / "tasks" / "demo.py").unlink()
    module = project.write_tasks(module="sciq")
    module.write_text(module.read_text(encoding="utf-8").replace("TASKS_TABLE", name), "utf-8")
    (project.root / "tasks" / "helpers.py").write_text("WORDS = ['a', 'b']\n", "utf-8")
    result = project.run("--evaltasks", "all")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*tasks/sciq.py*", f"it defines {name}, not TASKS_TABLE: rename it to TASKS_TABLE*"]
    )
    assert "helpers.py" not in result.stdout.str()


@pytest.mark.parametrize(
    "statement", ["from _prompts import build", "from tasks._prompts import build"]
)
def test_a_helper_imported_by_its_plain_name_gets_the_relative_import_hint(
    project: EvalProject, statement: str
) -> None:
    (project.root / "tasks" / "_prompts.py").write_text("def build(row):\n    return row\n")
    project.write_tasks('name="helped", version=0', module="helped", header=statement)
    result = project.run("--evaltasks", "all")
    result.stdout.fnmatch_lines(
        [
            f"*hint: '{statement.split()[1]}' is tasks/_prompts.py beside this task file; import "
            f"it relatively: `from ._prompts import ...` (each task folder is imported as a "
            f"package of its own*"
        ]
    )
