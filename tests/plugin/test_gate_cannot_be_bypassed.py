"""The gate, tried as a hostile tester would: each way around it, and each false alarm, closed.

Every test replays one case of the gate issue end to end: record, edit, run as a user would.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

REPO = Path(__file__).resolve().parents[2]
SUB = "mytask:sub|1"


def record(project: EvalProject, spec: str = "mytask:sub|1", *extra: str) -> bytes:
    """Record one task's snapshot and return its bytes."""
    project.run("--evaltasks", spec, "--snapshot-update", *extra).assert_outcomes(passed=1)
    return project.snapshot(spec).read_bytes()


@pytest.mark.parametrize(
    "bypass",
    [
        pytest.param(("--evaltasks-docs", "4"), id="docs-option"),
        pytest.param(("--evaltasks-system-prompt", "Hi."), id="system-prompt"),
        pytest.param(("--evaltasks-chat-template", "chatml"), id="chat-template"),
        pytest.param(("--evaltasks-max-samples", "4"), id="max-samples"),
        pytest.param((), id="ini-docs"),
    ],
)
def test_a_setting_cannot_smuggle_an_unversioned_prompt_change(
    project: EvalProject, bypass: tuple[str, ...]
) -> None:
    recorded = record(project)
    if not bypass:
        project.pytester.makeini("[pytest]\nevaltasks_docs = 4\n")
    project.write_tasks(prefix="Question: ")
    update = project.run("--evaltasks", SUB, "--snapshot-update", *bypass)
    update.assert_outcomes(failed=1)
    failure = project.failures(update)
    if "--evaltasks-max-samples" in bypass:
        assert "rendered 4 of 6 docs, so it cannot record a change" in failure
    else:
        assert "its version is still 0; the update is refused" in failure
    assert project.snapshot(SUB).read_bytes() == recorded
    compare = project.run("--evaltasks", SUB, *bypass)
    compare.assert_outcomes(failed=1)
    assert "not a prompt change" not in project.failures(compare)
    assert "content is unchanged" not in project.failures(compare)


def test_docs_shown_is_presentation_only(project: EvalProject) -> None:
    recorded = record(project)
    project.run("--evaltasks", SUB, "--evaltasks-docs", "5").assert_outcomes(passed=1)
    assert project.snapshot(SUB).read_bytes() == recorded
    project.run("--evaltasks", SUB, "--snapshot-update", "--evaltasks-docs", "5").assert_outcomes(
        passed=1
    )
    relaid = project.snapshot(SUB).read_text(encoding="utf-8")
    assert "docs_shown: 5" in relaid and relaid.count("--- end ---") == 5
    # Without the option, the recorded layout is kept.
    project.run("--evaltasks", SUB, "--snapshot-update").assert_outcomes(passed=1)
    assert project.snapshot(SUB).read_text(encoding="utf-8") == relaid


SPECIFIC_PROMPT = """\
    return Doc(query=f"{PREFIX}{row['q']}", choices=[" yes", " no"], gold_index=row["label"],
               specific=SPECIFIC, unconditioned_query=UNCONDITIONED, images=IMAGES)"""


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "SPECIFIC = {'instructions_id_list': ['punctuation:no_comma'], 'kwargs': [{}]}",
            "SPECIFIC = {'instructions_id_list': [], 'kwargs': [{}]}",
            id="specific",
        ),
        pytest.param("UNCONDITIONED = 'A:'", "UNCONDITIONED = 'Answer:'", id="unconditioned"),
        pytest.param("IMAGES = [b'\\x89PNG-one']", "IMAGES = [b'\\x89PNG-two']", id="images"),
    ],
)
def test_fields_beside_the_prompt_are_content(
    project: EvalProject, before: str, after: str
) -> None:
    defaults = "SPECIFIC = None\nUNCONDITIONED = None\nIMAGES = None\n"
    project.write_tasks(prompt_body=SPECIFIC_PROMPT, header=defaults + before)
    recorded = record(project)
    project.write_tasks(prompt_body=SPECIFIC_PROMPT, header=defaults + after)
    result = project.run("--evaltasks", SUB, "--snapshot-update")
    result.assert_outcomes(failed=1)
    assert "6 of 6 docs changed" in project.failures(result)
    assert project.snapshot(SUB).read_bytes() == recorded


def test_bundled_ifeval_emptied_instruction_list_is_caught(pytester: pytest.Pytester) -> None:
    shutil.copytree(REPO / "tasks", pytester.path / "tasks")
    args = ("-p", "no:hypothesispytest", "-p", "no:anyio", "--evaltasks", "ifeval|0")
    assert pytester.runpytest_subprocess(*args).ret == 0
    main = pytester.path / "tasks" / "ifeval" / "main.py"
    source = main.read_text(encoding="utf-8")
    emptied = source.replace(
        '"instructions_id_list": line["instruction_id_list"]', '"instructions_id_list": []'
    )
    assert emptied != source, "the ifeval prompt function no longer sets instructions_id_list"
    main.write_text(emptied, encoding="utf-8")
    result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*its version is still 1*", '*-specific: {"instructions_id_list": ["*']
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("Metrics.f1_score_macro", "Metrics.f1_score_micro"),
        ("Metrics.f1_score_micro", "Metrics.f1_score"),
        ("Metrics.loglikelihood_acc", "Metrics.acc_golds_likelihood"),
        ('Metrics.pass_at_k({"k": 1})', 'Metrics.pass_at_k({"k": 2})'),
    ],
)
def test_metrics_that_share_a_display_name_are_told_apart(
    project: EvalProject, before: str, after: str
) -> None:
    project.write_tasks(f'name="mytask:sub", version=0, metrics=[{before}]')
    recorded = record(project)
    project.write_tasks(f'name="mytask:sub", version=0, metrics=[{after}]')
    result = project.run("--evaltasks", SUB, "--snapshot-update")
    result.assert_outcomes(failed=1)
    failure = project.failures(result)
    assert "task fields changed (metrics)" in failure
    assert project.snapshot(SUB).read_bytes() == recorded


def test_a_crlf_checkout_still_guards_the_version(project: EvalProject) -> None:
    recorded = record(project)
    path = project.snapshot(SUB)
    crlf = recorded.replace(b"\n", b"\r\n")
    path.write_bytes(crlf)
    project.run("--evaltasks", SUB).assert_outcomes(passed=1)  # same content: passes as is
    assert path.read_bytes() == crlf
    project.write_tasks(prefix="Question: ")
    result = project.run("--evaltasks", SUB, "--snapshot-update")
    result.assert_outcomes(failed=1)
    assert "its version is still 0" in project.failures(result)
    assert path.read_bytes() == crlf
    project.write_tasks('name="mytask:sub", version=1', prefix="Question: ")
    project.run("--evaltasks", SUB, "--snapshot-update").assert_outcomes(passed=1)
    assert b"\r" not in path.read_bytes()  # always written with LF


def test_a_version_going_down_is_refused(project: EvalProject) -> None:
    project.write_tasks('name="mytask:sub", version=3')
    recorded = record(project)
    project.write_tasks('name="mytask:sub", version=2', prefix="Question: ")
    result = project.run("--evaltasks", SUB, "--snapshot-update")
    result.assert_outcomes(failed=1)
    assert "version went down (3 -> 2); versions only go up" in project.failures(result)
    assert project.snapshot(SUB).read_bytes() == recorded


TUPLE_PROMPT = """\
    choices = CHOICES([" yes", " no"])
    return Doc(query=f"{PREFIX}{row['q']}", choices=choices, gold_index=GOLD(row["label"]))"""


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param("CHOICES = list\nGOLD = int", "CHOICES = tuple\nGOLD = int", id="tuple"),
        pytest.param(
            "CHOICES = list\nGOLD = int",
            "import numpy\nCHOICES = list\nGOLD = numpy.int64",
            id="numpy-gold",
            marks=pytest.mark.subprocess,  # numpy first imported by the task, as in a user's run
        ),
    ],
)
def test_same_meaning_in_another_type_is_no_change(
    project: EvalProject, before: str, after: str
) -> None:
    if "numpy" in after and importlib.util.find_spec("numpy") is None:
        # Not imported here: pytester drops modules a test imported, and numpy cannot be
        # imported twice in one process (a later test in this worker would fail).
        pytest.skip("numpy is not installed")
    project.write_tasks(prompt_body=TUPLE_PROMPT, header=before)
    recorded = record(project)
    project.write_tasks(prompt_body=TUPLE_PROMPT, header=after)
    project.run("--evaltasks", SUB).assert_outcomes(passed=1)
    text = project.snapshot(SUB).read_bytes()
    assert text == recorded and b"int64" not in text


GLOBAL_RANDOM_PROMPT = """\
    import random
    choices = [" yes", " no", " maybe", " never"]
    gold = random.randint(0, 3)
    return Doc(query=f"{PREFIX}{row['q']}", choices=choices, gold_index=gold)"""


def test_a_prompt_function_drawing_from_global_random_is_deterministic(
    project: EvalProject,
) -> None:
    project.write_tasks(prompt_body=GLOBAL_RANDOM_PROMPT)
    recorded = record(project, "mytask:sub|1", "-p", "no:randomly")
    for _ in range(2):
        project.run("--evaltasks", SUB).assert_outcomes(passed=1)
        project.run("--evaltasks", f"solo,{SUB}").assert_outcomes(passed=1, failed=1)
    assert project.snapshot(SUB).read_bytes() == recorded


NONDETERMINISTIC_PROMPT = """\
    import itertools
    return Doc(query=f"{PREFIX}{row['q']} {next(COUNTER)}", choices=[" yes"], gold_index=0)"""


def test_a_nondeterministic_prompt_function_is_named_not_blamed_on_the_version(
    project: EvalProject,
) -> None:
    project.write_tasks(
        prompt_body=NONDETERMINISTIC_PROMPT, header="import itertools\nCOUNTER = itertools.count()"
    )
    result = project.run("--evaltasks", SUB, "--snapshot-update")
    result.assert_outcomes(failed=1)
    failure = project.failures(result)
    assert "nondeterministic prompt function" in failure
    assert "version" not in failure.split("\n")[1]
    assert not project.snapshot(SUB).exists()


MCQ_PROMPT = """\
    letters = ["A", "B", "C", "D"]
    options = "".join(f"{l}. option {l} of {row['q']}\\n" for l in letters)
    return Doc(query=f"{PREFIX}{row['q']}\\n{options}{ANSWER}", choices=[f" {l}" for l in letters],
               gold_index=row["label"])"""


def big_project(project: EvalProject, rows: int = 600, answer: str = "Answer:") -> None:
    """A 5-shot multiple-choice task of `rows` docs, shaped like an MMLU subject."""
    eval_rows = [{"q": f"question {i}", "label": i % 4} for i in range(rows)]
    train_rows = [{"q": f"train {i}", "label": i % 4} for i in range(8)]
    project.write_data("demo", "main", "test", eval_rows)
    project.write_data("demo", "main", "train", train_rows)
    project.write_tasks(
        'name="big", version=0', header=f"ANSWER = {answer!r}", prompt_body=MCQ_PROMPT
    )


def _failure_of(result: pytest.RunResult, label: str) -> list[str]:
    """The lines of one item's failure section."""
    lines = result.outlines
    start = next(
        i for i, line in enumerate(lines) if re.match(rf"_+ evaltask {re.escape(label)} _+", line)
    )
    end = next(i for i in range(start + 1, len(lines)) if re.match(r"^(_{3,} |={3,} )", lines[i]))
    return lines[start:end]


@pytest.mark.parametrize("ci", [False, True])
def test_a_one_word_change_at_real_size_reads_in_a_few_lines(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch, ci: bool
) -> None:
    big_project(project)
    project.run("--evaltasks", "big|5", "--snapshot-update").assert_outcomes(passed=1)
    project.write_tasks(
        'name="big", version=0', header='ANSWER = "ANSWER:"', prompt_body=MCQ_PROMPT
    )
    if ci:
        monkeypatch.setenv("CI", "true")
    else:
        monkeypatch.delenv("CI", raising=False)
    result = project.run("--evaltasks", "big|5")
    result.assert_outcomes(failed=1)
    section = _failure_of(result, "big|5")
    assert len(section) < 60
    assert any("ANSWER" in line for line in section)
    assert any(line.startswith("  [doc 1 of 600] id=") for line in section)
    assert not any(re.fullmatch(r"[-+ ]*\d+ [0-9a-f]{16}", line.strip()) for line in section)
    summary = [line for line in result.outlines if line.startswith("FAILED evaltasks::big|5")]
    assert len(summary) == 1
    assert "ANSWER" not in summary[0] and "\n" not in summary[0]
    total = "\n".join(result.outlines)
    assert total.count("[doc 1 of 600]") == 1  # the summary never repeats the diff


def test_tb_line_gives_one_line_per_task_and_vv_the_whole_diff(project: EvalProject) -> None:
    big_project(project, rows=40)
    project.run("--evaltasks", "big|5", "--snapshot-update").assert_outcomes(passed=1)
    project.write_tasks(
        'name="big", version=0', header='ANSWER = "Answer :"', prompt_body=MCQ_PROMPT
    )
    line = project.run("--evaltasks", "big|5", "--tb=line")
    line.assert_outcomes(failed=1)
    section = line.stdout.str().split("= FAILURES =")[1].split("\n", 1)[1]
    failures = section.split("\n=")[0].strip().split("\n")
    assert len(failures) == 1 and "big|5: 40 of 40 docs changed" in failures[0]
    loud = project.run("--evaltasks", "big|5", "-vv")
    assert "whole snapshot file diff" in loud.stdout.str()


BAD_OUTPUTS = [
    pytest.param(
        "Doc(query='q', choices=[' a'], gold_index=3)", "'gold_index' 3 is out of range", id="gold"
    ),
    pytest.param(
        "Doc(query='q', choices=[1, 2], gold_index=0)", "'choices' item 0 is int", id="int-choices"
    ),
    pytest.param(
        "Doc(query=None, choices=[' a'], gold_index=0)", "'query' is None", id="query-none"
    ),
    pytest.param(
        "Doc(query='q', choices=[' a'], gold_index='0')", "'gold_index' is str", id="str-gold"
    ),
]


@pytest.mark.parametrize("shots", ["0", "1"])
@pytest.mark.parametrize(("doc", "problem"), BAD_OUTPUTS)
def test_bad_prompt_output_is_an_error_naming_task_split_row_and_field(
    project: EvalProject, doc: str, problem: str, shots: str
) -> None:
    good = "Doc(query='ok', choices=[' a'], gold_index=0)"
    project.write_tasks(prompt_body=f"    return {doc} if row['__index'] == 2 else {good}")
    for mode in ((), ("--snapshot-update",)):
        result = project.run("--evaltasks", f"mytask:sub|{shots}", *mode)
        result.assert_outcomes(failed=1)
        failure = project.failures(result)
        assert "task 'mytask:sub'" in failure and problem in failure
        assert re.search(r"on split '(test|train)', row 2", failure)
        assert "IndexError" not in failure and "AttributeError" not in failure
        assert "_pytest" not in failure and "<invalid" not in failure
    assert not project.snapshot(f"mytask:sub|{shots}").exists()


def test_syrupy_disabled_is_a_usage_error(project: EvalProject) -> None:
    result = project.run("--evaltasks", "mytask:sub", "-p", "no:syrupy")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--evaltasks needs syrupy's pytest plugin*-p no:syrupy*"])
    assert "AttributeError" not in result.stdout.str() + result.stderr.str()


def test_writes_happen_before_warnings_so_w_error_keeps_the_snapshot(project: EvalProject) -> None:
    record(project)
    project.write_tasks('name="mytask:sub", version=1')
    result = project.run(
        "--evaltasks",
        SUB,
        "--snapshot-update",
        "-W",
        "error::pytest_evaltasks.plugin.items.EvalTasksWarning",
    )
    result.assert_outcomes(failed=1)
    assert "version: 1" in project.snapshot(SUB).read_text(encoding="utf-8")
