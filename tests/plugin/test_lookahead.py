"""The look-ahead process (`plugin.lookahead`): a fork that checks the last task items while the
run checks the first. It may only ever save time: every failure, warning, captured line, lint
finding and report is the one a run without it gives.

The end-to-end runs start a fresh interpreter (an in-process run inside an xdist worker has
other threads, so it never forks). Nothing waits on a clock: a `conftest.py` in the project
(`PROBE`) writes the forked process's id down before the first item runs and, when a test asks,
blocks there until that process has ended (a pidfd becomes readable when it exits). The fork
has then checked every item, so the tests know which items it took.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from pytest_evaltasks.plugin.lookahead import (
    LARGE_SNAPSHOT_BYTES,
    MIN_ITEMS,
    Conditions,
    left_to_run,
    refusal,
)

if TYPE_CHECKING:
    from conftest import EvalProject

pytestmark = pytest.mark.subprocess

TASKS = 8

PROBE = """\
import os
import select

import pytest

from pytest_evaltasks.plugin.items import RUN_KEY


class Probe:
    seen = False

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        session = item.config.stash.get(RUN_KEY, None)
        ahead = session.lookahead if session is not None else None
        if ahead is None or self.seen:
            return
        self.seen = True
        with open(os.environ["EVALTASKS_TEST_LOOKAHEAD_PID"], "w") as out:
            out.write(str(ahead.pid))
        if os.environ.get("EVALTASKS_TEST_WAIT_FOR_LOOKAHEAD"):
            ended = os.pidfd_open(ahead.pid)
            select.select([ended], [], [], 120)  # until the forked process checked every item
            os.close(ended)


def pytest_configure(config):
    config.pluginmanager.register(Probe())  # for every item, wherever its file is
"""

HEADER = """\
import logging
import os
import socket
import sqlite3
import threading
import warnings

if os.environ.get("EVALTASKS_TEST_START_THREAD"):  # a thread started at import
    threading.Thread(target=threading.Event().wait, daemon=True).start()
if os.environ.get("EVALTASKS_TEST_OPEN_SQLITE"):  # a database held open from import on
    DATABASE = sqlite3.connect(os.environ["EVALTASKS_TEST_LOOKAHEAD_PID"] + ".db")
if os.environ.get("EVALTASKS_TEST_OPEN_SOCKET"):  # a connection held open from import on
    SOCKETS = socket.socketpair()
LOUD = {loud!r}
LOGGED = {logged!r}
CHANGED = {changed!r}
"""

PROMPT = """\
    name = task_name.split("|")[0]
    if name == LOUD and row["__index"] == 0:
        print(f"printed by {name}")
        warnings.warn(f"warned by {name}", UserWarning)
    if name == LOGGED and row["__index"] == 0:
        logging.getLogger("demo").info(f"logged by {name}")
    query = f"Q: {row['q']}\\nA:" + (" (changed)" if name == CHANGED else "")
    return Doc(query=query, choices=[" yes", " no"], gold_index=row["label"])"""


def write(project: EvalProject, loud: str = "", changed: str = "", logged: str = "") -> None:
    """Eight tasks t0..t7 over the default rows; `loud` prints and warns, `changed` renders
    differently (no version bump), `logged` logs a record at INFO."""
    configs = [f'name="t{i}", version=0' for i in range(TASKS)]
    header = HEADER.format(loud=loud, changed=changed, logged=logged)
    project.write_tasks(*configs, header=header, prompt_body=PROMPT)


@pytest.fixture(autouse=True)
def probe(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path | None:
    """In a test with a project: its `conftest.py` that reports the forked process (see
    `PROBE`), and the file it writes the process id to, outside the project (never one of a
    task's inputs)."""
    if "project" not in request.fixturenames:
        return None
    project: EvalProject = request.getfixturevalue("project")
    (project.root / "conftest.py").write_text(PROBE, encoding="utf-8")
    pid_file = project.root.parent / f"{project.root.name}.lookahead-pid"
    monkeypatch.setenv("EVALTASKS_TEST_LOOKAHEAD_PID", str(pid_file))
    return pid_file


def recorded(project: EvalProject, **edit: str) -> None:
    """The eight tasks recorded, then rewritten with `edit` (see `write`)."""
    write(project)
    assert project.run("--evaltasks=all", "--snapshot-update").ret == 0
    if edit:
        write(project, **edit)


def taken(result: pytest.RunResult) -> int:
    """How many items took the look-ahead process's result (the verbose summary line)."""
    found = re.search(r"look-ahead: (\d+) of (\d+) task items", result.stdout.str())
    assert found is not None, result.stdout.str()
    assert int(found.group(2)) == TASKS
    return int(found.group(1))


def both(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[pytest.RunResult, pytest.RunResult]:
    """The same run with the look-ahead process (auto: its first item waits until the process
    has checked every item and ended) and without it (off)."""
    monkeypatch.setenv("EVALTASKS_TEST_WAIT_FOR_LOOKAHEAD", "1")
    auto = project.run("--evaltasks=all", "-v", *args)
    monkeypatch.delenv("EVALTASKS_TEST_WAIT_FOR_LOOKAHEAD")
    off = project.run("--evaltasks=all", "-v", "--evaltasks-lookahead=off", *args)
    assert "look-ahead:" not in off.stdout.str()
    return auto, off


def without_timings(text: str) -> str:
    return re.sub(r"\d+(\.\d+)?s\b", "Ns", text)


def test_a_compare_run_takes_the_later_items_from_the_forked_process(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded(project)
    auto, off = both(project, monkeypatch, "--evaltasks-report=report.md")
    assert auto.ret == off.ret == 0
    assert taken(auto) == TASKS  # the fork checked them all
    auto.stdout.fnmatch_lines(["*8 tasks checked*", "*outcomes: 8 unchanged*"])
    report = (project.root / "report.md").read_text(encoding="utf-8")
    project.run("--evaltasks=all", "--evaltasks-lookahead=off", "--evaltasks-report=report.md")
    assert (project.root / "report.md").read_text(encoding="utf-8") == report


def test_a_changed_prompt_it_saw_fails_as_without_it(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded(project, changed="t6")
    auto, off = both(project, monkeypatch)
    assert auto.ret == off.ret == 1
    auto.assert_outcomes(passed=TASKS - 1, failed=1)
    assert taken(auto) == TASKS - 1  # every item but the changed one
    failures = project.failures(auto)
    assert "t6" in failures and "version" in failures
    assert without_timings(failures) == without_timings(project.failures(off))


def test_an_update_run_writes_what_it_writes_without_it(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fork takes the items that keep their snapshot; the one to write is the run's."""
    recorded(project, changed="t6")
    text = project.snapshot("t6|0").read_bytes()
    auto, _ = both(project, monkeypatch, "--snapshot-update", "--evaltasks-allow-unversioned")
    assert auto.ret == 0
    assert taken(auto) == TASKS - 1  # every item but the one it writes
    assert project.snapshot("t6|0").read_bytes() != text
    files = project.snapshots()
    for path in project.snapshot_dir.iterdir():
        path.unlink()
    recorded(project, changed="t6")
    project.run(
        "--evaltasks=all",
        "--snapshot-update",
        "--evaltasks-allow-unversioned",
        "--evaltasks-lookahead=off",
    )
    assert project.snapshots() == files


def test_output_and_warnings_of_a_task_are_captured_by_the_run_itself(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded(project, loud="t5")
    auto, off = both(project, monkeypatch, "-rP")
    assert auto.ret == off.ret == 0
    assert taken(auto) == TASKS - 1  # t5 printed and warned: the run checked it itself
    for result in (auto, off):
        result.stdout.fnmatch_lines(["*UserWarning: warned by t5*"])
        result.stdout.fnmatch_lines(["*Captured stdout call*", "printed by t5"])


def test_log_records_of_a_task_are_captured_by_the_run_itself(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded(project, logged="t4")
    auto, off = both(project, monkeypatch, "-rP", "-o", "log_level=INFO")
    assert auto.ret == off.ret == 0
    assert taken(auto) == TASKS - 1  # t4 logged: the run checked it itself
    for result in (auto, off):
        result.stdout.fnmatch_lines(["*Captured log call*", "*logged by t4*"])


def test_lint_findings_of_the_items_it_checked_still_warn_and_fail(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project)
    module = project.root / "tasks" / "demo.py"  # every doc gets two equal choices
    text = module.read_text(encoding="utf-8")
    module.write_text(text.replace('[" yes", " no"]', '[" yes", " yes"]'), encoding="utf-8")
    assert project.run("--evaltasks=all", "--snapshot-update").ret == 0
    auto, off = both(project, monkeypatch, "--evaltasks-lint=error")
    assert auto.ret == off.ret == 1
    auto.assert_outcomes(failed=TASKS)
    assert taken(auto) == TASKS  # the fork checked them all
    assert without_timings(project.failures(auto)) == without_timings(project.failures(off))
    assert "lint finding" in project.failures(auto)


@pytest.mark.parametrize(
    ("args", "variable"),
    [
        (["-s"], ""),
        (["--pdb"], ""),
        (["--evaltasks-export=prompts.jsonl"], ""),
        ([], "EVALTASKS_TEST_START_THREAD"),
        ([], "EVALTASKS_TEST_OPEN_SQLITE"),
        ([], "EVALTASKS_TEST_OPEN_SOCKET"),
    ],
    ids=["-s", "--pdb", "export", "a thread", "an SQLite connection", "a socket"],
)
def test_a_run_that_must_not_fork_does_not(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch, args: list[str], variable: str
) -> None:
    """What the run reads from pytest's options and the process refuses the fork (the same
    run without it forks: the verbose summary says so either way): a task module that started
    a thread, or holds an SQLite connection or a socket, which a forked process would share."""
    recorded(project)
    assert "look-ahead:" in project.run("--evaltasks=all", "-v").stdout.str()
    if variable:
        monkeypatch.setenv(variable, "1")
    refused = project.run("--evaltasks=all", "-v", *args)
    assert refused.ret == 0
    refused.assert_outcomes(passed=TASKS)
    assert "look-ahead:" not in refused.stdout.str()


GOOD = Conditions(
    mode="auto",
    task_items=MIN_ITEMS,
    export=False,
    xdist_worker=False,
    debugging=False,
    traced=False,
    can_fork=True,
    cores=2,
    threads=1,
)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"mode": "off"}, "turned off"),
        ({"task_items": MIN_ITEMS - 1}, "fewer than"),
        ({"export": True}, "--evaltasks-export"),
        ({"xdist_worker": True}, "xdist worker"),
        ({"debugging": True}, "debugging"),
        ({"traced": True}, "tracer or profiler"),
        ({"can_fork": False}, "no fork"),
        ({"cores": 1}, "one usable core"),
        ({"threads": 2}, "other threads"),
        ({"connections": ("an SQLite connection",)}, "an SQLite connection opened"),
        ({"connections": ("a socket",)}, "a socket opened"),
    ],
)
def test_each_condition_it_needs_is_checked(change: dict[str, object], why: str) -> None:
    assert refusal(GOOD) is None
    reason = refusal(replace(GOOD, **change))  # type: ignore[arg-type]
    assert reason is not None and why in reason


STUCK = """\
    name = task_name.split("|")[0]
    if name == "t7" and os.getpid() != RUN_PID:  # only in the look-ahead process
        signal.pause()  # stuck for good: only a signal ends it
    return Doc(query=f"Q: {row['q']}\\nA:", choices=[" yes", " no"], gold_index=row["label"])"""


def test_the_run_never_waits_for_it_and_ends_it(project: EvalProject, probe: Path) -> None:
    configs = [f'name="t{i}", version=0' for i in range(TASKS)]
    header = "import os\nimport signal\n\nRUN_PID = os.getpid()\n"
    project.write_tasks(*configs, header=header, prompt_body=STUCK)
    assert project.run("--evaltasks=all", "--snapshot-update").ret == 0
    result = project.pytester.runpytest_subprocess("--evaltasks=all", "-v", timeout=120)
    assert result.ret == 0
    result.assert_outcomes(passed=TASKS)
    assert taken(result) == 0  # stuck on the last item from the start: the run checked all
    stuck = int(probe.read_text(encoding="utf-8"))
    with pytest.raises(ProcessLookupError):
        os.kill(stuck, 0)  # killed and reaped when the session ended


def test_large_tasks_and_new_ones_are_left_to_the_run(tmp_path: Path) -> None:
    """Two large tasks built at once would double the run's memory; a task without a snapshot
    fails in the run, which reports it."""
    small, large = tmp_path / "small.txt", tmp_path / "large.txt"
    small.write_bytes(b"x" * LARGE_SNAPSHOT_BYTES)
    large.write_bytes(b"x" * (LARGE_SNAPSHOT_BYTES + 1))
    assert not left_to_run(small)
    assert left_to_run(large)
    assert left_to_run(tmp_path / "missing.txt")


def test_what_the_fork_sends_is_taken_only_when_it_reads_as_a_result() -> None:
    """The run's side of the pipe: a clean pass is taken once, for its own item only; a line
    that does not read, a leave-it message, or no message at all leaves the item to the run."""
    import json
    import mmap

    from pytest_evaltasks.plugin.lookahead import Lookahead
    from pytest_evaltasks.plugin.summary import ItemResult
    from pytest_evaltasks.snapshot.gate import Outcome

    items: list[Any] = [object() for _ in range(5)]  # the run's side keys items by identity
    reader, writer = os.pipe()
    ahead = Lookahead(0, reader, mmap.mmap(-1, 8), {id(item): at for at, item in enumerate(items)})
    os.set_blocking(reader, False)
    passed = ItemResult(label="t4|0", outcome=Outcome.UNCHANGED, docs=6, lint=["x: y"])
    lines = [
        json.dumps({"at": 4, "result": passed.to_dict(), "warnings": ["w"]}),
        json.dumps({"at": 3}),  # left to the run
        "{not json",
        json.dumps({"at": 2, "result": {"label": "t2|0", "no such field": 1}, "warnings": []}),
    ]
    os.write(writer, ("\n".join(lines) + "\n").encode())
    try:
        assert ahead.take(items[0]) is None  # nothing sent for it
        checked = ahead.take(items[4])
        assert checked is not None and checked.result == passed and checked.warnings == ("w",)
        assert ahead.take(items[4]) is None  # taken once
        assert ahead.take(items[3]) is None
        assert ahead.take(items[2]) is None
        assert ahead.take(cast(Any, object())) is None
        assert ahead.taken == 1
    finally:
        os.close(writer)
        os.close(reader)
