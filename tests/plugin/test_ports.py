"""Port items end to end: two task requests that claim to render the same benchmark, compared doc
by doc, their differences recorded and gated (`evaltasks::port:NAME`)."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

MODULE = """\
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics


def prompt(row, task_name):
    return Doc(query=f"Question: {row['q']}{A}Answer:", choices=[" yes", " no"],
               gold_index=row["label"])


def prompt_copy(row, task_name):
    return Doc(query=f"Question: {row['q']}{B}Answer:", choices=[" yes", " no"],
               gold_index=row["label"])


def cfg(name, fn):
    return LightevalTaskConfig(
        name=name, prompt_function=fn, hf_repo="demo", hf_subset="main",
        metrics=[Metrics.exact_match], hf_avail_splits=["train", "test"],
        evaluation_splits=["test"], few_shots_split="train", version=0,
    )


TASKS_TABLE = [cfg("quiz", prompt), cfg("quiz_copy", prompt_copy)]
"""

PORTS = """\
[[port]]
name = "quiz_copy"
a = "quiz|1"
b = "quiz_copy|1"
"""


def project_with(
    project: EvalProject, a: str = "\\n", b: str = "\\n\\n", ports: str = PORTS
) -> None:
    for split, count in (("test", 6), ("train", 4)):
        rows = [{"q": f"{split} {i}?", "label": i % 2} for i in range(count)]
        project.write_data("demo", "main", split, rows)
    text = MODULE.replace("{A}", a).replace("{B}", b)
    (project.root / "tasks" / "quiz.py").write_text(text, encoding="utf-8")
    (project.root / "tasks" / "ports.toml").write_text(ports, encoding="utf-8")


def record(project: EvalProject) -> str:
    return (project.snapshot_dir / "ports" / "quiz_copy.txt").read_text(encoding="utf-8")


def differences(text: str) -> list[str]:
    return text.split("[differences]\n", 1)[1].rstrip("\n").split("\n")


def test_a_copy_with_one_changed_delimiter_is_exactly_that_difference(
    project: EvalProject,
) -> None:
    project_with(project)
    new = project.run("--evaltasks", "port:quiz_copy")
    new.assert_outcomes(failed=1)
    assert "port:quiz_copy: new port, no record yet" in project.failures(new)
    project.run("--evaltasks", "port:quiz_copy", "--snapshot-update").assert_outcomes(passed=1)
    found = differences(record(project))
    assert len(found) == 2  # one kind, and its example
    assert found[0].startswith("delimiter or whitespace: 6 docs (test/0, test/1, test/2, test/3")
    # the example points at the changed characters: one line break became two
    assert found[1].startswith("  e.g. test/")
    assert "?\\n[]Answer: " in found[1] and "?\\n[\\n]Answer: " in found[1]
    project.run("--evaltasks", "ports").assert_outcomes(passed=1)


def test_a_change_of_the_differences_fails_with_their_diff_and_identical_is_named(
    project: EvalProject,
) -> None:
    project_with(project)
    project.run("--evaltasks", "port:quiz_copy", "--snapshot-update").assert_outcomes(passed=1)
    recorded = record(project)

    project_with(project, b="\\u200b\\n")  # a zero-width space where the copy had a line break
    changed = project.run("--evaltasks", "port:quiz_copy", "--evaltasks-report=report.md")
    changed.assert_outcomes(failed=1)
    failure = project.failures(changed)
    assert "what differs between the two sides changed" in failure
    assert "differences (recorded -> current):" in failure
    assert "⟨U+200B⟩" in failure  # the invisible character is written as its code point
    assert record(project) == recorded  # a compare run never writes
    report = (project.root / "report.md").read_text(encoding="utf-8")
    assert "### Port changes" in report and "port:quiz_copy" in report
    project.run("--evaltasks", "port:quiz_copy", "--evaltasks-report=report.html")
    page = (project.root / "report.html").read_text(encoding="utf-8")
    section = page.split('<section id="ports"><h2>Port changes</h2>', 1)[1].split("</section>")[0]
    assert "port:quiz_copy" in section and "U+200B" in section

    project_with(project, b="\\n")
    same = project.run("--evaltasks", "port:quiz_copy")
    same.assert_outcomes(failed=1)
    assert "the two sides now render the same: the port is identical" in project.failures(same)
    project.run("--evaltasks", "port:quiz_copy", "--snapshot-update").assert_outcomes(passed=1)
    assert differences(record(project)) == ["none: both sides render the same"]


def test_all_checks_the_ports_and_a_task_string_may_mix_them(project: EvalProject) -> None:
    project_with(project)
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=6)  # 5 tasks
    result = project.run("--evaltasks", "quiz|0,port:quiz_copy", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*evaltasks::port:quiz_copy PASSED*"])
    project.run("evaltasks::port:quiz_copy").assert_outcomes(passed=1)


def test_an_unknown_port_is_a_usage_error_naming_the_declared_ones(project: EvalProject) -> None:
    project_with(project)
    result = project.run("--evaltasks", "port:quiz_cpy")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        ["*unknown port port:quiz_cpy (did you mean quiz_copy?); declared ports: quiz_copy*"]
    )


def test_a_bad_declaration_names_the_file_the_port_and_the_field(project: EvalProject) -> None:
    project_with(project, ports=PORTS.replace('b = "quiz_copy|1"', "b = 3"))
    result = project.run("--evaltasks", "ports")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        ["*ports.toml: port 1 (quiz_copy), b: expected a task string*got 3*"]
    )


def test_a_side_whose_harness_is_missing_skips_naming_the_extra(project: EvalProject) -> None:
    if importlib.util.find_spec("lm_eval") is not None:
        pytest.skip("lm-eval is installed here: its ports run (tests/in_place_lm_eval)")
    missing = '[[port]]\nname = "x"\na = "quiz|0"\nb = { task = "t", dir = "lm_eval:tasks" }\n'
    project_with(project, ports=PORTS + "\n" + missing)
    result = project.run("--evaltasks", "port:x", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ["*side t (lm_eval:tasks) needs lm_eval: install pytest-evaltasks[[]lm-eval[]]*"]
    )
    assert "outcomes: 1 error" not in result.stdout.str()


def test_show_prints_a_doc_as_both_sides_render_it(project: EvalProject) -> None:
    project_with(project, b="\\n\\u200b")
    result = project.run("--evaltasks", "port:quiz_copy", "--evaltasks-show=test/2")
    assert result.ret == 0
    out = result.stdout.str()
    assert "=== port:quiz_copy: 1 of 6 aligned docs; a = quiz|1, b = quiz_copy|1" in out
    assert "--- test/2 ---" in out
    assert any(
        line.startswith("Answer:") and "\u2260 \u27e8U+200B\u27e9Answer:" in line
        for line in out.splitlines()
    )  # the changed line is marked, its zero-width space visible
    assert not (project.snapshot_dir / "ports").exists()  # show touches nothing


@pytest.mark.slow
def test_a_changed_only_run_selects_the_port_of_a_changed_side(project: EvalProject) -> None:
    """A port reads two sides' files (and harnesses' installed ones): a changed-only run keeps
    it whatever changed, even when the change selects no task, and the full run fails for it
    when the change moved its differences."""
    from git_project import assert_caught, commit_recorded, selected, write

    project.pytester.makeini("[pytest]\nevaltasks_changed_ignore = notes.txt\n")
    project_with(project)
    commit_recorded(project)
    write(project.root / "notes.txt", "a change no task reads\n")
    assert selected(project) == ["evaltasks::port:quiz_copy"]
    project_with(project, b="\\n\\n\\n")  # the copy's delimiter moves again
    assert_caught(project, "port:quiz_copy")
