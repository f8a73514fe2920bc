"""Every input and option behaves as a pytest user expects: clear errors, nothing lost.

One test per case of the hardening issue, run end to end as a user runs pytest.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

SUB = "mytask:sub|0"


UNCOPYABLE = """\
import threading


class Prompter:
    def __init__(self):
        self.lock = threading.Lock()  # a tokenizer or a database handle would do the same

    def __call__(self, row, task_name):
        with self.lock:
            return Doc(query=f"{PREFIX}{row['q']}", choices=[" yes"], gold_index=0)

    def method(self, row, task_name):
        return self(row, task_name)


PROMPTER = Prompter()
"""


@pytest.mark.parametrize("function", ["PROMPTER", "PROMPTER.method"])
def test_an_uncopyable_prompt_function_works(project: EvalProject, function: str) -> None:
    project.write_tasks(
        f'name="mytask:sub", version=0, prompt_function={function}', header=UNCOPYABLE
    )
    result = project.run("--evaltasks", "mytask:sub|0,mytask:sub|2", "--snapshot-update")
    result.assert_outcomes(passed=2)
    assert "pickle" not in result.stdout.str()


@pytest.mark.parametrize(
    "script",
    [
        "import argparse\nargparse.ArgumentParser().parse_args(['--no-such-flag'])\n",
        "import sys\nsys.exit(3)\n",
        "raise KeyError('x')\n",
    ],
    ids=["argparse", "sys.exit", "error"],
)
def test_a_helper_script_in_the_task_folder_is_a_broken_module_not_the_end_of_the_run(
    project: EvalProject, script: str
) -> None:
    (project.root / "tasks" / "make_data.py").write_text(script, encoding="utf-8")
    (project.root / "tasks" / "_helper_script.py").write_text(script, encoding="utf-8")
    result = project.run("--evaltasks", "mytask:sub", "--snapshot-update")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["  tasks/make_data.py: *"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert "tasks/_helper_script.py" not in result.stdout.str()  # `_` files are never imported
    listing = project.run("--evaltasks-list")
    assert listing.ret == 1
    listing.stdout.fnmatch_lines(["3 tasks in 1 module*", "failed to import: tasks/make_data.py*"])


def test_a_snapshot_dir_that_is_a_file_is_a_usage_error(project: EvalProject) -> None:
    (project.root / "snaps").write_text("", encoding="utf-8")
    result = project.run("--evaltasks", "solo", "--evaltasks-snapshot-dir=snaps")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--evaltasks-snapshot-dir: *snaps is a file, not a directory*"])


def test_a_system_prompt_that_is_not_utf8_is_a_usage_error(project: EvalProject) -> None:
    prompt = b"caf\xe9".decode("utf-8", "surrogateescape")  # Latin-1 bytes in argv
    result = project.run("--evaltasks", "solo", "--evaltasks-system-prompt", prompt)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--evaltasks-system-prompt holds bytes that are not UTF-8*"])


@pytest.mark.parametrize(
    "errors",
    [("-W", "error"), ("-o", "filterwarnings=error")],
    ids=["-W error", "filterwarnings"],
)
def test_warnings_as_errors_write_first_then_fail_briefly(
    project: EvalProject, errors: tuple[str, str]
) -> None:
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    project.write_tasks(
        'name="mytask:sub", version=1',
        'name="mytask:other", version=0, stop_sequence=["\\n"], generation_size=5',
        'name="solo", version=0, hf_avail_splits=["test"]',
    )
    result = project.run("--evaltasks", "mytask:sub", "--snapshot-update", *errors)
    result.assert_outcomes(failed=1)
    assert "version: 1" in project.snapshot(SUB).read_text(encoding="utf-8")  # written first
    failure = project.failures(result)
    assert "version 0 -> 1 but no content changed" in failure
    assert len(failure.split("\n")) < 10 and "Traceback" not in failure


def test_warnings_point_at_the_task_file_and_name_the_task_once(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask:sub", "--snapshot-update").assert_outcomes(passed=1)
    project.write_tasks(
        'name="mytask:sub", version=1',
        'name="mytask:other", version=0, stop_sequence=["\\n"], generation_size=5',
        'name="solo", version=0, hf_avail_splits=["test"]',
    )
    result = project.run("--evaltasks", "mytask:sub", "--snapshot-update")
    result.assert_outcomes(passed=1, warnings=1)
    text = result.stdout.str()
    assert re.search(r"tasks/demo\.py:\d+: EvalTasksWarning: version 0 -> 1", text)
    assert "items.py" not in text
    assert "mytask:sub|0: mytask:sub|0" not in text


def test_node_ids_printed_in_reports_can_be_passed_back(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask,solo", "--snapshot-update").assert_outcomes(passed=3)
    alone = project.run("evaltasks::solo|0")
    alone.assert_outcomes(passed=1)
    two = project.run("evaltasks::solo|0", "evaltasks::mytask:sub|0", "-v")
    two.assert_outcomes(passed=2)
    two.stdout.fnmatch_lines(["evaltasks::solo|0 PASSED*", "evaltasks::mytask:sub|0 PASSED*"])
    narrowed = project.run("--evaltasks", "mytask", "evaltasks::mytask:other|0")
    narrowed.assert_outcomes(passed=1)
    unknown = project.run("evaltasks::nope|0")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    unknown.stderr.fnmatch_lines(["*node ids: unknown task*", "  'nope'*"])


def test_k_accepts_the_bar_of_a_task_label(project: EvalProject) -> None:
    project.run("--evaltasks", "mytask|0,mytask|1", "--snapshot-update").assert_outcomes(passed=4)
    for expression in ("sub|1", "sub/1", "mytask:sub|1 or other|0"):
        result = project.run("--evaltasks", "mytask|0,mytask|1", "-k", expression)
        expected = 2 if " or " in expression else 1
        result.assert_outcomes(passed=expected, deselected=4 - expected)


def test_repeated_evaltasks_options_add_up(project: EvalProject) -> None:
    result = project.run("--evaltasks", "mytask:sub", "--evaltasks", "solo", "--snapshot-update")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["evaltasks: 2 tasks from 'mytask:sub + solo'*"])
    assert project.snapshot("solo|0").is_file() and project.snapshot(SUB).is_file()


def test_m_evaltask_without_evaltasks_says_what_to_add(project: EvalProject) -> None:
    (project.root / "test_other.py").write_text("def test_x():\n    pass\n", encoding="utf-8")
    result = project.run("-m", "evaltask", "test_other.py")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["*task items exist only with --evaltasks*"])


def test_path_options_in_both_forms_resolve_alike(project: EvalProject) -> None:
    spaced = project.run(
        "--evaltasks", "solo", "--snapshot-update", "--evaltasks-snapshot-dir", "a"
    )
    equals = project.run("--evaltasks", "solo", "--snapshot-update", "--evaltasks-snapshot-dir=b")
    spaced.assert_outcomes(passed=1)
    equals.assert_outcomes(passed=1)
    assert project.snapshots(project.root / "a") == project.snapshots(project.root / "b")
    assert len(project.snapshots(project.root / "a")) == 1


@pytest.mark.parametrize(
    "option", ["--evaltasks-data", "--evaltasks-snapshot-dir", "--evaltasks-dir"]
)
def test_a_path_outside_the_project_after_a_space_keeps_the_project_root(
    project: EvalProject, tmp_path_factory: pytest.TempPathFactory, option: str
) -> None:
    """pytest fixes its rootdir before it knows the plugin's options, so the value after a
    space reads to it as a test path outside the project: the root (the default task folder,
    the recorded paths) stays the project's, with or without `=`, and the header says why."""
    outside = tmp_path_factory.mktemp("elsewhere")
    tasks = project.root / "tasks"
    if option == "--evaltasks-data":
        shutil.copytree(tasks / "data", outside / "data")
        value = outside / "data"
    elif option == "--evaltasks-dir":
        shutil.copytree(tasks, outside / "tasks")
        value = outside / "tasks"
    else:
        value = outside / "snapshots"
    equals = project.run("--evaltasks", "solo", "--snapshot-update", f"{option}={value}")
    equals.assert_outcomes(passed=1)
    spaced = project.run("--evaltasks", "solo", option, str(value))
    spaced.assert_outcomes(passed=1)
    spaced.stdout.fnmatch_lines([f"evaltasks: root {project.root} (pytest's rootdir *"])
    assert "root" not in " ".join(
        line for line in equals.outlines if line.startswith("evaltasks: root")
    )


def test_the_root_rule_is_pytests_own_for_the_paths_named(tmp_path: Path) -> None:
    """Without an ini file, pytest's rootdir for the test paths named: what they share with
    the invocation folder, or a `setup.py` folder above them."""
    from pytest_evaltasks.plugin.root import rootdir_rule, spaced_values

    project, other = tmp_path / "project", tmp_path / "other"
    (project / "tests").mkdir(parents=True)
    other.mkdir()
    assert rootdir_rule([], project) == project
    assert rootdir_rule(["tests"], project) == project
    assert rootdir_rule([str(other)], project) == tmp_path
    (tmp_path / "setup.py").write_text("", encoding="utf-8")
    assert rootdir_rule(["tests"], project) == tmp_path
    args = ["--evaltasks", "a|0", "--evaltasks-data", "/d", "-k", "x", "--evaltasks-dir=t"]
    assert spaced_values(args) == ["a|0", "/d"]


def test_a_chat_template_file_is_recorded_relative_to_the_root(project: EvalProject) -> None:
    template = project.root / "templates" / "mine.jinja"
    template.parent.mkdir()
    template.write_text(
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}", encoding="utf-8"
    )
    first = project.run(
        "--evaltasks",
        "solo",
        "--snapshot-update",
        "--evaltasks-chat-template=./templates/mine.jinja",
    )
    first.assert_outcomes(passed=1)
    recorded = project.snapshot("solo|0").read_text(encoding="utf-8")
    assert 'chat_template: "templates/mine.jinja" (sha256:' in recorded
    again = project.run("--evaltasks", "solo", f"--evaltasks-chat-template={template}")
    again.assert_outcomes(passed=1)  # typed differently, recorded the same


@pytest.mark.subprocess  # the peak memory of a process of its own
def test_memory_does_not_grow_with_a_prompt_functions_cyclic_garbage(
    project: EvalProject,
) -> None:
    """Each row leaves a reference cycle holding 200 KB; the collector must reclaim them
    while the split is built, not after."""
    rows = [{"q": f"question {i}", "label": i % 2} for i in range(3000)]
    project.write_data("demo", "main", "test", rows)
    project.write_tasks(
        prompt_body="""\
    holder = {"payload": bytearray(200_000)}
    holder["self"] = holder
    return Doc(query=f"{PREFIX}{row['q']}", choices=[" yes", " no"], gold_index=row["label"])""",
        header="",
    )
    probe = project.root / "conftest.py"
    probe.write_text(
        # VmHWM is this process's own peak; ru_maxrss would also count the pages it shared,
        # before exec, with the (large, long-running) test worker that started it.
        "import re\n\n"
        "def pytest_unconfigure(config):\n"
        "    status = open('/proc/self/status').read()\n"
        "    peak = int(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1)) // 1024\n"
        "    print(f'PEAK_MB={peak}')\n",
        encoding="utf-8",
    )
    result = project.run("--evaltasks", "mytask:sub", "--snapshot-update", "-s")
    result.assert_outcomes(passed=1)
    peak = int(re.search(r"PEAK_MB=(\d+)", result.stdout.str()).group(1))
    assert peak < 300, f"peak {peak} MB: 3000 x 200 KB of garbage would be 600 MB"


@pytest.mark.parametrize(
    ("key", "value", "modes"),
    [("evaltasks_lint", "loud", "warn, error, off"), ("evaltasks_lookahead", "maybe", "auto, off")],
)
def test_an_unknown_mode_in_the_ini_file_is_a_usage_error(
    project: EvalProject, key: str, value: str, modes: str
) -> None:
    project.pytester.makeini(f"[pytest]\n{key} = {value}\n")
    result = project.run("--evaltasks", "solo")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{key} (ini) must be one of {modes}, got {value!r}*"])
