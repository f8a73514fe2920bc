"""The record cannot be laundered, end to end: judged against the reviewed history
(`--evaltasks-base`), partial runs that never record, writes that are verified, text that
round-trips, nondeterminism named for what it is, and errors that say what to do."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

pytestmark = pytest.mark.slow  # CI runs it; the quick start leaves it out (-m "not slow")

GIT_IDENTITY = ("-c", "user.email=ci@example.org", "-c", "user.name=CI")
SUB = "mytask:sub|1"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=root, capture_output=True, text=True, check=True
    )
    return done.stdout


def record(project: EvalProject, spec: str = SUB, *extra: str) -> bytes:
    project.run("--evaltasks", spec, "--snapshot-update", *extra).assert_outcomes(passed=1)
    return project.snapshot(spec).read_bytes()


@pytest.fixture
def main(project: EvalProject) -> EvalProject:
    """The default project, `mytask:sub|1` recorded and committed on branch `main`, then a
    feature branch checked out."""
    git(project.root, "init", "-q", "-b", "main")
    record(project)
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "reviewed")
    git(project.root, "checkout", "-q", "-b", "feature")
    return project


# --- the base record --------------------------------------------------------------------------


@pytest.mark.parametrize("update", [False, True])
def test_deleting_the_snapshot_cannot_launder_a_change(main: EvalProject, update: bool) -> None:
    main.write_tasks(edited=(2,))
    main.snapshot(SUB).unlink()
    mode = ("--snapshot-update",) if update else ()
    result = main.run("--evaltasks", SUB, "--evaltasks-base=main", *mode)
    result.assert_outcomes(failed=1)
    failure = main.failures(result)
    assert "changed since main without a version bump" in failure
    assert "1 of 6 docs changed (id 2)" in failure
    assert not main.snapshot(SUB).exists()


def test_a_re_recorded_file_is_still_judged_against_the_base(main: EvalProject) -> None:
    main.write_tasks(edited=(2,))
    main.snapshot(SUB).unlink()
    main.run("--evaltasks", SUB, "--snapshot-update").assert_outcomes(passed=1)  # no base: new
    result = main.run("--evaltasks", SUB, "--evaltasks-base=main")
    result.assert_outcomes(failed=1)
    assert "changed since main without a version bump" in main.failures(result)


def test_the_base_is_read_from_the_ini_file(main: EvalProject) -> None:
    main.pytester.makeini("[pytest]\nevaltasks_base = main\n")
    main.write_tasks(edited=(2,))
    main.snapshot(SUB).unlink()
    main.run("--evaltasks", SUB, "--snapshot-update").assert_outcomes(failed=1)


@pytest.mark.parametrize("where", ["addopts", "command line"])
def test_a_partial_run_cannot_be_judged_against_the_base(main: EvalProject, where: str) -> None:
    """`--evaltasks-max-samples` checks the first docs only: added to `addopts` in the PR that
    changes a later doc, it would pass a run that must fail. Against the reviewed record every
    doc is checked, so the two together are a usage error that names the option's place."""
    main.write_tasks(edited=(5,))  # a doc past the first 2
    if where == "addopts":
        main.pytester.makeini("[pytest]\naddopts = --evaltasks-max-samples=2\n")
        result = main.run("--evaltasks", SUB, "--evaltasks-base=main")
    else:
        result = main.run("--evaltasks", SUB, "--evaltasks-base=main", "--evaltasks-max-samples=2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    message = result.stderr.str()
    assert "--evaltasks-max-samples" in message and "--evaltasks-base" in message
    assert ("addopts" in message) is (where == "addopts")


@pytest.mark.parametrize("how", ["ini", "renamed task folder", "symlink"])
def test_moving_the_snapshot_folder_cannot_launder_a_change(main: EvalProject, how: str) -> None:
    """The reviewed record is found where it was at the base: the snapshot folder moved by an
    ini setting, renamed with its task folder, or reached through a symlink, in the same
    change as an unversioned prompt change re-recorded in the new place."""
    root = main.root
    args = ["--evaltasks", SUB]
    if how == "ini":
        git(root, "mv", "tasks/__snapshots__", "snaps")
        main.pytester.makeini("[pytest]\nevaltasks_snapshot_dir = snaps\n")
    elif how == "renamed task folder":
        git(root, "mv", "tasks", "evals")
        args.append("--evaltasks-dir=evals")
    else:
        git(root, "mv", "tasks/__snapshots__", "kept")
        os.symlink(root / "kept", root / "tasks" / "__snapshots__")
    tasks = root / ("evals" if how == "renamed task folder" else "tasks")
    module = tasks / "demo.py"
    module.write_text(module.read_text(encoding="utf-8").replace("EDITED = set()", "EDITED = {2}"))
    main.run(*args, "--snapshot-update", "--evaltasks-allow-unversioned").assert_outcomes(passed=1)
    result = main.run(*args, "--evaltasks-base=main")
    result.assert_outcomes(failed=1)
    failure = main.failures(result)
    assert "changed since main without a version bump" in failure


def test_a_deleted_snapshot_is_still_checked_under_all(main: EvalProject) -> None:
    main.run("--evaltasks", "all", "--snapshot-update")  # every other task recorded too
    main.snapshot(SUB).unlink()
    main.run("--evaltasks", "all", "--snapshot-update")
    assert main.snapshot("mytask:sub|0").exists()  # without the base, |1 quietly drops out
    main.snapshot("mytask:sub|0").unlink()
    result = main.run("--evaltasks", "all", "--evaltasks-base=main")
    assert result.parseoutcomes().get("failed") == 1
    assert "mytask:sub|0" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*mytask:sub|1: its snapshot exists at main but was deleted*"])
    update = main.run("--evaltasks", "all", "--evaltasks-base=main", "--snapshot-update")
    assert update.parseoutcomes().get("failed") is None
    assert main.snapshot(SUB).exists()  # recorded again: its content agrees with the base


def test_two_branches_bumping_to_the_same_version_fail_after_the_merge(
    main: EvalProject,
) -> None:
    root = main.root
    main.write_tasks('name="mytask:sub", version=1', edited=(1,))
    record(main)
    git(root, "commit", "-qam", "A: edit doc 1, bump to 1")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--ff-only", "feature")  # A lands on main
    git(root, "checkout", "-q", "-b", "other", "HEAD~1")
    main.write_tasks('name="mytask:sub", version=1', edited=(4,))
    record(main)
    git(root, "commit", "-qam", "B: edit doc 4, bump to 1")
    # B's pull request after A landed: both edits are in the merged prompt function; the
    # snapshot conflict is resolved by taking one side, as the conflict message advises.
    merge = subprocess.run(
        ["git", *GIT_IDENTITY, "merge", "-q", "main"], cwd=root, capture_output=True, text=True
    )
    assert merge.returncode != 0  # both changed the task module and the snapshot
    git(root, "checkout", "--theirs", "--", ".")
    main.write_tasks('name="mytask:sub", version=1', edited=(1, 4))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "merge main")
    plain = main.run("--evaltasks", SUB)
    assert plain.parseoutcomes().get("failed") == 1  # doc 4 differs from main's record...
    result = main.run("--evaltasks", SUB, "--evaltasks-base=main")
    result.assert_outcomes(failed=1)
    failure = main.failures(result)
    assert "changed since main without a version bump (still 1)" in failure
    assert "bump the task's `version` above 1" in failure
    # ... and re-recording the merged file does not help: the base still judges it.
    main.run("--evaltasks", SUB, "--snapshot-update", "--evaltasks-allow-unversioned")
    again = main.run("--evaltasks", SUB, "--evaltasks-base=main")
    again.assert_outcomes(failed=1)


@pytest.mark.parametrize("ref", ["no-such-branch", "HEAD~5"])
def test_an_unknown_base_is_a_usage_error_naming_fetch_depth(main: EvalProject, ref: str) -> None:
    result = main.run("--evaltasks", SUB, f"--evaltasks-base={ref}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--evaltasks-base: '{ref}' is not a revision*fetch-depth*"])


def test_a_shallow_clone_names_fetch_depth(main: EvalProject, tmp_path: Path) -> None:
    git(main.root, "commit", "-q", "--allow-empty", "-m", "second")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{main.root}", str(clone))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--evaltasks", SUB,
         "--evaltasks-base=HEAD~1"],
        cwd=clone, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "this clone is shallow" in done.stderr and "fetch-depth: 0" in done.stderr


def test_a_versioned_change_since_the_base_is_reviewed_then_recorded(main: EvalProject) -> None:
    main.write_tasks('name="mytask:sub", version=1', edited=(2,))
    compare = main.run("--evaltasks", SUB, "--evaltasks-base=main")
    compare.assert_outcomes(failed=1)
    assert "version 0 -> 1" in main.failures(compare)
    main.run("--evaltasks", SUB, "--evaltasks-base=main", "--snapshot-update").assert_outcomes(
        passed=1
    )
    main.run("--evaltasks", SUB, "--evaltasks-base=main").assert_outcomes(passed=1)


# --- max_samples ------------------------------------------------------------------------------


def test_max_samples_cannot_launder_a_changed_row(project: EvalProject) -> None:
    rows = [{"q": city, "label": i % 2} for i, city in enumerate(
        ["Paris", "Rome", "Madrid", "Lima", "Nairobi", "Tokyo"])]  # fmt: skip
    project.write_data("demo", "main", "test", rows)
    recorded = record(project)
    rows[5]["q"] = "Kyoto"
    project.write_data("demo", "main", "test", rows)
    project.run("--evaltasks", SUB, "--snapshot-update").assert_outcomes(failed=1)
    partial = project.run("--evaltasks", SUB, "--evaltasks-max-samples", "1", "--snapshot-update")
    assert project.snapshot(SUB).read_bytes() == recorded
    assert "snapshots: 1 written" not in partial.stdout.str()
    again = project.run("--evaltasks", SUB, "--snapshot-update")
    again.assert_outcomes(failed=1)
    assert "1 of 6 docs changed (id 5)" in project.failures(again)
    project.run("--evaltasks", SUB).assert_outcomes(failed=1)
    assert project.snapshot(SUB).read_bytes() == recorded


def test_a_quick_subset_checks_a_full_snapshot(project: EvalProject) -> None:
    record(project)
    result = project.run("--evaltasks", SUB, "--evaltasks-max-samples", "2")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*partial run: 2 of 6 recorded docs checked*"])


# --- writes are verified ----------------------------------------------------------------------


def test_a_write_that_does_not_land_fails_its_item(project: EvalProject) -> None:
    """A full disk (here: a file size limit) fails the item naming the file and the cause; the
    summary counts no write, and the old file stays."""
    recorded = record(project)
    project.write_tasks('name="mytask:sub", version=1', edited=(2,))

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(recorded) // 2, len(recorded) // 2))

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
         "--evaltasks", SUB, "--snapshot-update"],
        cwd=project.root, capture_output=True, text=True, preexec_fn=limit,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    assert "the snapshot could not be written to" in done.stdout
    assert "snapshots: 1 written" not in done.stdout and "1 passed" not in done.stdout
    assert project.snapshot(SUB).read_bytes() == recorded
    leftovers = [p.name for p in project.snapshot_dir.iterdir() if p.name.startswith(".")]
    assert leftovers == []


def test_a_temp_file_of_a_killed_run_is_removed_by_the_next(project: EvalProject) -> None:
    record(project)
    dead = project.snapshot_dir / f".{project.snapshot(SUB).name}.999999999.deadbeef.evaltasks-tmp"
    live = project.snapshot_dir / f".x.txt.{os.getpid()}.0badf00d.evaltasks-tmp"
    dead.write_text("half", encoding="utf-8")
    live.write_text("being written", encoding="utf-8")
    project.run("--evaltasks", SUB).assert_outcomes(passed=1)
    assert not dead.exists()
    assert live.exists()  # its process still runs


# --- text round-trips -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ending",
    ["\t", "\u00a0", "\u3000", " \u2028 x", "\u0085", "\r", "\u2420", "\\x41", "\ud800"],
    ids=["tab", "nbsp", "ideographic", "line-separator", "nel", "cr", "visible-space",
         "escape-like", "lone-surrogate"],
)  # fmt: skip
def test_a_prompt_line_ending_in_any_character_round_trips(
    project: EvalProject, ending: str
) -> None:
    project.write_tasks(prefix=f"Q{ending}\n")
    recorded = record(project)
    compare = project.run("--evaltasks", SUB)
    compare.assert_outcomes(passed=1)
    project.run("--evaltasks", SUB, "--snapshot-update").assert_outcomes(passed=1)
    assert project.snapshot(SUB).read_bytes() == recorded
    assert all(line == line.rstrip() for line in recorded.decode("utf-8").split("\n"))


# --- nondeterminism across processes ----------------------------------------------------------

SET_ORDER_PROMPT = """\
    options = list({"alpha", "beta", "gamma", "delta", "epsilon", "zeta"})
    return Doc(query=f"{PREFIX}{row['q']}", choices=[" " + o for o in options], gold_index=0)"""

IMPORT_TIME_RANDOM = """\
    return Doc(query=f"{PREFIX}{row['q']} {NOISE}", choices=[" yes"], gold_index=0)"""


@pytest.mark.subprocess  # PYTHONHASHSEED is read when an interpreter starts
def test_a_hash_seed_dependent_task_passes_under_any_hash_seed(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write_tasks(prompt_body=SET_ORDER_PROMPT)
    monkeypatch.setenv("PYTHONHASHSEED", "7")
    recorded = record(project)
    assert b"hash_seed: 0" in recorded
    for seed in ("1", "2", "random"):
        monkeypatch.setenv("PYTHONHASHSEED", seed)
        result = project.run("--evaltasks", SUB)
        result.assert_outcomes(passed=1)
        result.stdout.fnmatch_lines(["*hash-seed-dependent: prompts depend on PYTHONHASHSEED*"])
    assert project.snapshot(SUB).read_bytes() == recorded


def test_import_time_randomness_is_never_blamed_on_the_version(project: EvalProject) -> None:
    project.write_tasks(
        prompt_body=IMPORT_TIME_RANDOM, header="import random\nNOISE = random.random()"
    )
    result = project.run("--evaltasks", SUB, "--snapshot-update")
    result.assert_outcomes(failed=1)
    failure = project.failures(result)
    assert "nondeterministic across processes (hash seed, set order, import-time" in failure
    assert "bump" not in failure
    assert not project.snapshot(SUB).exists()


def test_a_recorded_task_that_turns_nondeterministic_is_named_so(project: EvalProject) -> None:
    record(project)
    project.write_tasks(
        prompt_body=IMPORT_TIME_RANDOM, header="import random\nNOISE = random.random()"
    )
    result = project.run("--evaltasks", SUB)
    result.assert_outcomes(failed=1)
    headline = project.failures(result).split("\n")[2]
    assert "nondeterministic across processes" in headline
    assert "version" not in headline


# --- named errors -----------------------------------------------------------------------------


def test_an_invalid_config_names_field_value_and_choices(project: EvalProject) -> None:
    project.write_tasks('name="acme:qa", version=0, few_shots_select="balancd"', module="acme")
    record(project)
    result = project.run("-q", "--evaltasks", SUB)
    result.assert_outcomes(passed=1)
    text = result.stdout.str()
    assert "tasks/acme.py" in text
    assert "field 'few_shots_select' = 'balancd'" in text
    assert "(did you mean balanced?)" in text


def test_a_broken_module_is_named_under_q(project: EvalProject) -> None:
    record(project)
    (project.root / "tasks" / "broken.py").write_text("raise RuntimeError('boom')\n")
    result = project.run("-q", "--evaltasks", SUB)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["*1 task module failed to import*", "*tasks/broken.py: RuntimeError: boom*"]
    )


DEEP_PROMPT = """\
    value = []
    for _ in range(3000):
        value = [value]
    return Doc(query=row["q"], choices=[" yes"], gold_index=0, specific={"deep": value})"""


def test_deep_nesting_is_a_named_error(project: EvalProject) -> None:
    project.write_tasks(prompt_body=DEEP_PROMPT)
    result = project.run("--evaltasks", SUB, "--snapshot-update")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "specific" in text and "nested more than" in text
    assert "RecursionError" not in text and "INTERNALERROR" not in text


def test_a_one_word_change_in_huge_prompts_prints_a_bounded_failure(
    project: EvalProject,
) -> None:
    project.write_tasks(prefix="word " * 400_000)
    record(project)
    project.write_tasks(prefix="Word " + "word " * 399_999)
    result = project.run("--evaltasks", SUB)
    result.assert_outcomes(failed=1)
    assert len(result.stdout.str()) < 200_000
    assert "more characters cut" in result.stdout.str()
