"""Many machines: the documented sharded workflow, run job by job with pytest-split.

Each shard job's `run` line (docs/ci.md, In CI, Many machines) runs in the project with its
matrix group; the report job's merge runs on the files the shards wrote, laid out as
`actions/download-artifact` lays them out. Together the shards run every item exactly once,
and the merged report and step summary are the unsharded run's, byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from docs_text import section

pytest.importorskip("pytest_split")
yaml = pytest.importorskip("yaml")  # a dependency of datasets: always here

if TYPE_CHECKING:
    from conftest import EvalProject

QUIET = "-p no:randomly -p no:hypothesispytest -p no:anyio"
STAYS = [f'name="fam:t{number}", version=0' for number in range(5)]
EDITED = [f'name="ed:t{number}", version=0' for number in range(4)]
BROKEN_MODULE = "import nope_not_a_module_anywhere\n"
RESULT_LINE = re.compile(r"^(PASSED|FAILED|ERROR) (evaltasks::\S+)")


def recipe() -> dict[str, Any]:
    """The documented sharded workflow (docs/ci.md, Many machines)."""
    block = re.search(r"```yaml\n(.*?)```", _section(), re.DOTALL)
    assert block is not None
    workflow: dict[str, Any] = yaml.safe_load(block.group(1))
    return workflow


def step(job: str, name: str) -> dict[str, Any]:
    steps = recipe()["jobs"][job]["steps"]
    found: dict[str, Any] = next(s for s in steps if s.get("name", s.get("uses")) == name)
    return found


def run_step(
    job: str, name: str, cwd: Path, group: int | None = None, addopts: str = ""
) -> tuple[int, str, str]:
    """A step's `run` script in bash as Actions runs it, with its `env` (`matrix.group` set to
    `group`); the exit code, the output, and the step summary it appended."""
    found = step(job, name)
    env = {**os.environ}
    for key, value in (found.get("env") or {}).items():
        env[key] = str(value).replace("${{ matrix.group }}", str(group))
    summary = cwd / f"step-summary-{job}-{group}.md"
    summary.write_text("", encoding="utf-8")
    env["GITHUB_STEP_SUMMARY"] = str(summary)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["PYTEST_ADDOPTS"] = f"{QUIET} -rA {addopts}"
    done = subprocess.run(
        ["bash", "-e", "-c", found["run"]], cwd=cwd, env=env, capture_output=True, text=True
    )
    return done.returncode, done.stdout + done.stderr, summary.read_text(encoding="utf-8")


def ran(output: str) -> list[str]:
    """The node ids of the items a run reported (`-rA`)."""
    return [m.group(2) for line in output.splitlines() if (m := RESULT_LINE.match(line))]


def download(cwd: Path) -> Path:
    """The shards' uploaded files where the report job's download step puts them."""
    upload = step("shards", "actions/upload-artifact@v4")["with"]["path"]
    target = cwd / step("report", "actions/download-artifact@v4")["with"]["path"]
    target.mkdir()
    for group in (1, 2, 3):
        name = upload.replace("${{ matrix.group }}", str(group))
        shutil.copy(cwd / name, target / name)  # merge-multiple: one folder
    return target


def nine_tasks(project: EvalProject) -> None:
    """Nine tasks recorded with their durations, then four of them edited (two without a
    version bump, two with one) and a broken module added: ten items, six failing."""
    project.write_tasks(*STAYS, module="demo")
    project.write_tasks(*EDITED, module="edited")
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=9)
    (record,) = [block for block in re.findall(r"```bash\n(.*?)```", _section(), re.DOTALL)]
    command = record.splitlines()[0].split()
    assert command[0] == "pytest"
    project.run(*command[1:]).assert_outcomes(passed=9)  # --store-durations
    durations = json.loads((project.root / ".test_durations").read_text(encoding="utf-8"))
    assert len([key for key in durations if key.startswith("evaltasks::")]) == 9
    bumped = [config.replace("version=0", "version=1") for config in EDITED[2:]]
    project.write_tasks(*EDITED[:2], *bumped, module="edited", edited=(2, 4))
    (project.root / "tasks" / "broken.py").write_text(BROKEN_MODULE, encoding="utf-8")


def _section() -> str:
    return section("docs/ci.md", "### Many machines")


def test_three_shards_run_every_item_once_and_merge_into_the_unsharded_report(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    nine_tasks(project)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(project.root / "unsharded-summary.md"))
    (project.root / "unsharded-summary.md").write_text("", encoding="utf-8")
    whole = project.run("--evaltasks", "all", "--evaltasks-report=unsharded.md", "-rA")
    whole.assert_outcomes(passed=5, failed=5)  # the broken module's item and 4 edited tasks
    everything = ran(whole.stdout.str())
    assert len(everything) == 10
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")

    shards = []
    for group in (1, 2, 3):
        addopts = "-n 2" if group == 2 else ""  # xdist inside a shard
        code, output, summary = run_step(
            "shards", "Prompts, one shard", project.root, group, addopts
        )
        items = ran(output)
        failing = any(line.startswith("FAILED") for line in output.splitlines())
        assert code == (1 if failing else 0), output
        assert summary == ""  # a shard writes data; the report job writes the summary
        if group == 2:  # pytest-split's line is the workers'
            assert re.search(r"\b2 workers\b", output), output
        else:
            assert f"[pytest-split] Running group {group}/3" in output
        shards.append(items)
    assert Counter(item for items in shards for item in items) == Counter(everything)
    assert all(0 < len(items) < len(everything) for items in shards), shards

    results = download(project.root)
    code, output, summary = run_step("report", "Merge the shards' results", project.root)
    assert code == 1, output  # items failed: the report job fails too
    assert "evaltasks merge: 3 results files, 10 items, 5 failed" in output
    merged = (project.root / "prompt-report.md").read_bytes()
    assert merged == (project.root / "unsharded.md").read_bytes()
    assert summary == (project.root / "unsharded-summary.md").read_text(encoding="utf-8")
    text = merged.decode("utf-8")
    assert "## pytest-evaltasks: 10 items checked (compare mode)" in text
    assert "tasks changed the same way" in text  # one group across the shards' items

    # A shard that did not upload: the report says so, the job fails.
    (results / "evaltasks-results-2.json").unlink()
    code, output, _ = run_step("report", "Merge the shards' results", project.root)
    assert code == 1
    assert "evaltasks merge: group 2 of 3 missing" in output
    text = (project.root / "prompt-report.md").read_text(encoding="utf-8")
    assert "> **Warning**: group 2 of 3 missing" in text


def test_a_group_given_no_item_passes_and_merges(project: EvalProject) -> None:
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=3)
    unsharded = project.run("--evaltasks", "all", "--evaltasks-report=unsharded.md")
    unsharded.assert_outcomes(passed=3)
    files = []
    empty = []
    for group in (1, 2, 3, 4):
        path = f"results-{group}.json"
        split = ("--splits", "4", "--group", str(group))
        shard = project.run("--evaltasks", "all", *split, f"--evaltasks-results={path}")
        assert shard.ret == pytest.ExitCode.OK, shard.stdout.str()
        data = json.loads((project.root / path).read_text(encoding="utf-8"))
        assert data["shard"]["group"] == group and data["shard"]["splits"] == 4
        if not data["items"]:
            empty.append(group)
            assert "results written to results-" in shard.stdout.str()
        files.append(str(project.root / path))
    assert empty, "four groups of three items: one is empty"
    split = ("--splits", "4", "--group", str(empty[0]))
    parallel = project.run("--evaltasks", "all", *split, "--evaltasks-results=x.json", "-n", "2")
    assert parallel.ret == pytest.ExitCode.OK, parallel.stdout.str()
    output = project.root / "merged.md"
    merge = [sys.executable, "-m", "pytest_evaltasks.plugin.report", "merge", *files]
    environ = {key: value for key, value in os.environ.items() if key != "GITHUB_STEP_SUMMARY"}
    done = subprocess.run(
        [*merge, "--output", str(output)], capture_output=True, text=True, env=environ
    )
    assert done.returncode == 0, done.stderr
    assert output.read_bytes() == (project.root / "unsharded.md").read_bytes()


def test_the_results_file_is_the_same_under_xdist(project: EvalProject) -> None:
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=3)
    project.write_tasks(edited=(1,))
    args = ("--evaltasks", "all")
    project.run(*args, "--evaltasks-results=serial.json", "-p", "no:xdist").assert_outcomes(
        failed=3
    )
    project.run(*args, "--evaltasks-results=xdist.json", "-n", "2").assert_outcomes(failed=3)
    serial = (project.root / "serial.json").read_bytes()
    assert (project.root / "xdist.json").read_bytes() == serial
    data = json.loads(serial)
    assert data["shard"] is None
    assert data["selection"]["spec"] == "all" and data["selection"]["tasks"] == 3
    assert [item["pytest"] for item in data["items"]] == ["failed"] * 3
    assert [item["result"]["label"] for item in data["items"]] == [
        "mytask:other|0",
        "mytask:sub|0",
        "solo|0",
    ]


def test_a_results_path_that_cannot_be_written_is_a_usage_error(project: EvalProject) -> None:
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=3)
    (project.root / "out").mkdir()
    folder = project.run("--evaltasks", "all", "--evaltasks-results=out")
    assert folder.ret == pytest.ExitCode.USAGE_ERROR
    folder.stderr.fnmatch_lines(["*--evaltasks-results=*out: that is a directory; name a file*"])
    same = project.run("--evaltasks", "all", "--evaltasks-results=r.md", "--evaltasks-report=r.md")
    assert same.ret == pytest.ExitCode.USAGE_ERROR
    same.stderr.fnmatch_lines(["*--evaltasks-results=*r.md: --evaltasks-report writes that file*"])
    assert not (project.root / "r.md").exists()
