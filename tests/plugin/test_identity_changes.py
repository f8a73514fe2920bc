"""A changed object in a task's config is reported as what changed inside it (the step, the
setting, the old and new value), read from the `[identities]` outlines the snapshot keeps,
never as two digests alone."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from pytest_evaltasks.snapshot.parse import parse_snapshot

if TYPE_CHECKING:
    from conftest import EvalProject

MODULE = """\
import dataclasses

from pytest_evaltasks import Doc, LightevalTaskConfig


def exact(pred, gold):
    return float(pred == gold)


@dataclasses.dataclass
class Step:
    name: str
    template: str


@dataclasses.dataclass
class Metric:
    metric_name: str
    sample_level_fn: object
    category: str = "GENERATIVE"
    threshold: float = THRESHOLD
    steps: list = dataclasses.field(default_factory=lambda: STEPS)


def prompt(row, task_name):
    return Doc(query="Q: " + row["q"] + "\\nA:", choices=[" yes", " no"], gold_index=row["label"])


TASKS_TABLE = [
    LightevalTaskConfig(
        name="scored",
        prompt_function=prompt,
        hf_repo="demo",
        hf_subset="main",
        metrics=[Metric("em", exact)],
        evaluation_splits=["test"],
        hf_avail_splits=["test"],
        version=0,
    )
]
"""

STEPS = '[Step("system", "Be brief."), Step("ask", "Q: {prompt}")]'


def write(project: EvalProject, threshold: str = "0.5", steps: str = STEPS) -> None:
    project.write_data("demo", "main", "test", [{"q": f"q{i}", "label": i % 2} for i in range(3)])
    text = MODULE.replace("THRESHOLD", threshold).replace("STEPS", steps)
    (project.root / "tasks").mkdir(exist_ok=True)
    (project.root / "tasks" / "scored.py").write_text(text, encoding="utf-8")


def test_the_snapshot_outlines_an_object_it_records_by_digest(project: EvalProject) -> None:
    write(project)
    project.run("--evaltasks", "scored", "--snapshot-update").assert_outcomes(passed=1)
    text = project.snapshot("scored|0").read_text(encoding="utf-8")
    facts = parse_snapshot(text)
    digest = facts.task["metrics"].rpartition("#")[2]
    section = text.split("[identities]\n", 1)[1].split("\n\n", 1)[0]
    assert section.startswith(f"#{digest} tasks/scored.py:Metric\n")
    lines = section.split("\n")
    assert "  threshold: 0.5" in lines
    assert '  steps[1].template: "Q: {prompt}"' in lines
    assert facts.identities == tuple(lines)


def test_a_changed_setting_is_named_with_its_old_and_new_value(project: EvalProject) -> None:
    write(project)
    project.run("--evaltasks", "scored", "--snapshot-update").assert_outcomes(passed=1)
    write(project, threshold="0.7")
    result = project.run("--evaltasks", "scored", "--evaltasks-report=report.md")
    result.assert_outcomes(failed=1)
    failure = project.failures(result)
    assert "task fields changed:" in failure
    assert "    threshold: 0.5 -> 0.7 (in tasks/scored.py:Metric)" in failure
    report = (project.root / "report.md").read_text(encoding="utf-8")
    assert "threshold: 0.5 -> 0.7" in report


def test_a_changed_step_names_the_step_and_an_added_one_is_named_once(
    project: EvalProject,
) -> None:
    write(project)
    project.run("--evaltasks", "scored", "--snapshot-update").assert_outcomes(passed=1)
    edited = '[Step("system", "Be brief."), Step("ask", "Question: {prompt}"), Step("x", "y")]'
    write(project, steps=edited)
    failure = project.failures(project.run("--evaltasks", "scored"))
    expected = textwrap.dedent(
        """\
            steps[1].template: "Q: {prompt}" -> "Question: {prompt}" (in tasks/scored.py:Step)
            steps[2]: added tasks/scored.py:Step (in tasks/scored.py:Metric)
        """
    )
    assert textwrap.indent(expected, "    ") in failure + "\n"
    assert "steps[2].template" not in failure  # the added step is named once
