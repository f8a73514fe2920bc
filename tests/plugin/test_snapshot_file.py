"""The snapshot file: where it lives, what it says, how it is named, how big it gets."""

from __future__ import annotations

import os
import re
import stat
from typing import TYPE_CHECKING

import pytest

from pytest_evaltasks.snapshot.storage import snapshot_filename

if TYPE_CHECKING:
    from conftest import EvalProject

HEADER_TASKS = (
    'name="rich", version=3, hf_revision="rev-42", stop_sequence=["\\n", "Q:"], '
    'generation_size=7, few_shots_select="sequential", '
    "metrics=[Metrics.exact_match, Metrics.loglikelihood_acc]",
    'name="solo", version=12, hf_avail_splits=["test"]',
)


def _section(text: str, name: str) -> dict[str, str]:
    """`key: value` lines of one `[name]` section."""
    block = text.split(f"[{name}]\n", 1)[1].split("\n\n", 1)[0]
    return dict(line.split(": ", 1) for line in block.splitlines())


def _doc_blocks(text: str) -> list[str]:
    return re.findall(r"^\[doc \d+ of \d+\] id=.*?^--- end ---$", text, flags=re.S | re.M)


def test_update_writes_plain_utf8_file_with_task_header(project: EvalProject) -> None:
    project.write_tasks(*HEADER_TASKS)
    result = project.run("--evaltasks", "rich|2,solo|1", "--snapshot-update")
    result.assert_outcomes(passed=2)
    assert sorted(project.snapshots()) == sorted(
        [snapshot_filename("rich|2"), snapshot_filename("solo|1")]
    )

    path = project.snapshot("rich|2")
    raw = path.read_bytes()
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0600
    text = raw.decode("utf-8")  # plain UTF-8, not pickled, not syrupy's amber format
    assert text.startswith("# pytest-evaltasks snapshot, format ")
    assert "¿qué?" in text
    assert b"\r\n" not in raw
    assert _section(text, "task") == {
        "name": "rich|2",
        "version": "3",
        "dataset": "demo / main @ rev-42",
        "data_files": "null",
        "evaluation_splits": "test",
        "few_shots_split": "train",
        "few_shots_select": "sequential",
        "num_fewshots": "2",
        "generation_size": "7",
        "stop_sequences": '["\\n", "Q:"]',
        "num_samples": "null",
        "metrics": "exact_match [em; GENERATIVE], loglikelihood_acc [acc; LOGPROBS]",
        "metric_params": "-",
        "docs": "6",
        "fewshot_pool": "5 docs",
    }
    assert _section(text, "settings") == {
        "system_prompt": "null",
        "chat_template": "null",
    }
    assert _section(text, "layout") == {"docs_shown": "3"}
    # No chat rendering unless asked for.
    assert "--- prompt (chat" not in text

    solo = project.snapshot("solo|1").read_text(encoding="utf-8")
    header = _section(solo, "task")
    assert header["version"] == "12"
    assert header["few_shots_split"] == "test"
    assert header["few_shots_warning"].startswith("WARNING:")
    assert "evaluation split" in header["few_shots_warning"]
    assert re.search(r"^few_shots_warning: WARNING: .*$", solo, flags=re.M)
    assert "few_shots_warning" not in text


def test_snapshot_holds_every_doc_hash_and_first_n_docs_in_full(project: EvalProject) -> None:
    result = project.run(
        "--evaltasks", "mytask:sub|2", "--snapshot-update", "--evaltasks-docs", "2"
    )
    result.assert_outcomes(passed=1)
    text = project.snapshot("mytask:sub|2").read_text(encoding="utf-8")

    hashes = text.split("[doc hashes] 6 docs, by id\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split(" ")[0] for line in hashes] == [str(i) for i in range(6)]
    assert all(re.fullmatch(r"\d+ [0-9a-f]{16}", line) for line in hashes)
    assert re.search(r"^content: sha256:[0-9a-f]{64}$", text, flags=re.M)

    blocks = _doc_blocks(text)
    assert len(blocks) == 2
    assert _section(text, "layout")["docs_shown"] == "2"
    for position, block in enumerate(blocks, start=1):
        doc_id = int(re.search(rf"^\[doc {position} of 6\] id=(\d+)$", block, re.M).group(1))
        fewshot = re.search(r"^fewshot_ids: (.*)$", block, re.M).group(1).split(", ")
        assert len(fewshot) == 2
        assert 'choices: [" yes", " no"]' in block
        assert f"gold_index: {doc_id % 2}" in block
        assert f'golds: ["{[" yes", " no"][doc_id % 2]}"]' in block
        prompt = block.split("--- prompt (plain text) ---\n", 1)[1].split("\n--- end ---")[0]
        expected = [f"Q: train {i}\nA: {['yes', 'no'][int(i) % 2]}" for i in fewshot]
        expected.append(f"Q: question {doc_id} ¿qué?\nA:")
        plain = "\n\n".join(expected)
        assert prompt == "\n".join("| " + line if line else "|" for line in plain.split("\n"))


def test_docs_ini_and_option_choose_how_many_docs_are_shown(project: EvalProject) -> None:
    project.pytester.makeini("[pytest]\nevaltasks_docs = 1\n")
    project.run("--evaltasks", "solo", "--snapshot-update").assert_outcomes(passed=1)
    from_ini = project.snapshot("solo|0").read_text(encoding="utf-8")
    assert len(_doc_blocks(from_ini)) == 1
    assert _section(from_ini, "layout")["docs_shown"] == "1"

    cli = project.run("--evaltasks", "mytask:sub", "--snapshot-update", "--evaltasks-docs", "0")
    cli.assert_outcomes(passed=1)
    text = project.snapshot("mytask:sub|0").read_text(encoding="utf-8")
    assert _doc_blocks(text) == []
    assert "[doc hashes] 6 docs, by id" in text


def test_chat_template_and_system_prompt_are_rendered_and_recorded(project: EvalProject) -> None:
    args = ("--evaltasks", "mytask:sub|1", "--snapshot-update", "--evaltasks-docs", "1")
    chatml = project.run(
        *args, "--evaltasks-chat-template", "chatml", "--evaltasks-system-prompt", "Be brief."
    )
    chatml.assert_outcomes(passed=1)
    text = project.snapshot("mytask:sub|1").read_text(encoding="utf-8")
    settings = _section(text, "settings")
    assert settings["system_prompt"] == '"Be brief."'
    assert settings["chat_template"].startswith('"chatml" (sha256:')
    block = _doc_blocks(text)[0]
    assert "--- prompt (plain text) ---\n| Be brief.\n|\n| Q: train" in block
    rendered = block.split("--- prompt (chat template chatml) ---\n", 1)[1]
    assert rendered.startswith("| <|im_start|>system\n| Be brief.<|im_end|>\n| <|im_start|>user\n")
    assert rendered.endswith("| <|im_start|>assistant\n|\n--- end ---")
    assert "--- prompt (chat messages) ---" not in block

    messages = project.run(
        *args, "--evaltasks-chat-template", "messages", "--evaltasks-snapshot-dir", "msgs"
    )
    messages.assert_outcomes(passed=1)
    text = project.snapshot("mytask:sub|1", project.root / "msgs").read_text(encoding="utf-8")
    assert _section(text, "settings")["chat_template"] == '"messages"'
    block = _doc_blocks(text)[0]
    rendered = block.split("--- prompt (chat messages) ---\n", 1)[1]
    assert re.fullmatch(
        r"<user>\n\| Q: train \d\n\| A:\n<assistant>\n\|  (yes|no)\n"
        r"<user>\n\| Q: question \d ¿qué\?\n\| A:\n--- end ---",
        rendered,
    )
    assert "chat template" not in block


def test_snapshot_dir_option_is_relative_to_cwd_and_ini_to_ini_file(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.pytester.makeini("[pytest]\nevaltasks_snapshot_dir = ini_snaps\n")
    work = project.root / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    base = ("--evaltasks", "solo", "--snapshot-update", "--evaltasks-dir", "../tasks")

    project.run(*base).assert_outcomes(passed=1)
    assert (project.root / "ini_snaps" / snapshot_filename("solo|0")).is_file()
    assert not (work / "ini_snaps").exists()

    project.run(*base, "--evaltasks-snapshot-dir", "cli_snaps").assert_outcomes(passed=1)
    assert (work / "cli_snaps" / snapshot_filename("solo|0")).is_file()
    assert not project.snapshot_dir.exists()


def test_file_names_are_distinct_and_cannot_escape_the_snapshot_dir(project: EvalProject) -> None:
    # `x:5|0` and `x-5|0` fold to the same readable part; the hash keeps them apart.
    assert snapshot_filename("t|5") != snapshot_filename("t5")
    assert snapshot_filename("x:5|0") != snapshot_filename("x-5|0")
    assert snapshot_filename("ARC|0").lower() != snapshot_filename("arc|0").lower()
    for key in ("../../etc/passwd|0", "a/b|0", "..|0", "/abs|0", "..\\win|0"):
        name = snapshot_filename(key)
        assert "/" not in name and "\\" not in name and ".." not in name
        assert not name.startswith(".")

    project.write_tasks(
        'name="x:5"', 'name="x-5"', 'name="../escape/x"', 'name="t"', 'name="t5"', module="names"
    )
    tasks_dir = project.root / "tasks"
    before = {p for p in tasks_dir.rglob("*") if "__snapshots__" not in p.parts}
    result = project.run("--evaltasks", "x:5,x-5,../escape/x,t|5,t5", "--snapshot-update")
    result.assert_outcomes(passed=5)
    written = project.snapshots()
    assert sorted(written) == sorted(
        snapshot_filename(key) for key in ("x:5|0", "x-5|0", "../escape/x|0", "t|5", "t5|0")
    )
    after = {p for p in tasks_dir.rglob("*") if "__snapshots__" not in p.parts}
    assert after == before, f"files written outside the snapshot dir: {after - before}"
    assert not list(project.root.rglob("escape")), "a task name escaped the snapshot dir"
    assert not (project.root.parent / "escape").exists()
    names = {
        name: project.snapshot_dir.joinpath(name).read_text(encoding="utf-8").split("\n")[4]
        for name in written
    }
    assert sorted(names.values()) == sorted(
        f"name: {key}" for key in ("x:5|0", "x-5|0", "../escape/x|0", "t|5", "t5|0")
    )


def test_metric_params_give_distinct_items_and_files(project: EvalProject) -> None:
    spec = "mytask:sub@k=5|0,mytask:sub@k=6|0,mytask:sub|0,mytask:sub@k=5|0"
    collected = project.run("--evaltasks", spec, "--collect-only", "-q")
    assert [line for line in collected.outlines if line.startswith("evaltasks::")] == [
        "evaltasks::mytask:sub@k=5|0",
        "evaltasks::mytask:sub@k=6|0",
        "evaltasks::mytask:sub|0",
    ]
    project.run("--evaltasks", spec, "--snapshot-update").assert_outcomes(passed=3)
    files = project.snapshots()
    assert len(files) == 3
    params = {_section(data.decode("utf-8"), "task")["metric_params"] for data in files.values()}
    assert params == {'{"k":5}', '{"k":6}', "-"}
    assert project.snapshot("mytask:sub@k=5|0").name in files


def test_thousand_doc_task_snapshot_stays_small(project: EvalProject) -> None:
    project.write_data(
        "big", "main", "test", [{"q": f"q{i} " * 20, "label": i % 2} for i in range(1000)]
    )
    project.write_data(
        "big", "main", "train", [{"q": f"t{i} " * 20, "label": i % 2} for i in range(50)]
    )
    project.write_tasks('name="big", hf_repo="big"', module="big")
    project.run("--evaltasks", "big|5", "--snapshot-update").assert_outcomes(passed=1)
    path = project.snapshot("big|5")
    size = path.stat().st_size
    assert size < 50_000, f"{size} bytes"
    assert "[doc hashes] 1000 docs, by id" in path.read_text(encoding="utf-8")
