"""`--evaltasks-export=FILE` end to end: one JSON object per rendered doc, the same bytes serially
and under xdist, in compare and update mode, and a usage error for a path it cannot write."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

FIELDS = [
    "task",
    "task_name",
    "num_fewshots",
    "version",
    "item",
    "rendering",
    "doc_id",
    "doc_label",
    "position",
    "query",
    "choices",
    "gold_index",
    "golds",
    "instruction",
    "fewshot_ids",
    "prompt",
    "messages",
    "chat_template",
    "chat_template_text",
    "sampling",
]
"""The documented schema (docs/ci.md, Export the prompts), in order."""


def _records(path: Any) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_export_writes_one_object_per_doc_with_ids_fields_and_prompts(
    project: EvalProject,
) -> None:
    project.run("--evaltasks", "mytask:sub|1,solo", "--snapshot-update").assert_outcomes(passed=2)
    result = project.run("--evaltasks", "mytask:sub|1,solo", "--evaltasks-export=out/p.jsonl")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["12 prompts exported to out/p.jsonl"])
    records = _records(project.root / "out" / "p.jsonl")
    assert len(records) == 12
    assert all(list(record) == FIELDS for record in records)
    assert [r["task"] for r in records] == ["mytask:sub|1"] * 6 + ["solo|0"] * 6
    assert [r["position"] for r in records] == [*range(6), *range(6)]
    first = records[0]
    assert first["task_name"] == "mytask:sub" and first["num_fewshots"] == 1
    assert first["version"] == 0 and first["item"] == "mytask:sub|1"
    assert first["rendering"] == "plain"
    assert first["doc_label"] == first["doc_id"]
    assert first["choices"] == [" yes", " no"]
    assert first["golds"] == [first["choices"][first["gold_index"]]]
    assert first["instruction"] is None
    assert len(first["fewshot_ids"]) == 1
    assert first["query"] in first["prompt"] and first["prompt"].startswith("Q: train ")
    assert first["messages"][-1] == {"role": "user", "content": first["query"]}
    assert first["chat_template"] is None and first["chat_template_text"] is None
    assert first["sampling"] == {
        "methods": ["GENERATIVE"],  # from the metric (exact_match), as the snapshot says
        "generation_size": None,
        "stop_sequences": [],
        "num_samples": 1,
        "use_logits": False,
    }
    assert "\u00bfqu\u00e9?" in (project.root / "out" / "p.jsonl").read_text(encoding="utf-8")
    solo = records[6]
    assert solo["fewshot_ids"] == [] and solo["prompt"] == solo["query"]


def test_export_holds_the_chat_template_text_and_the_system_prompt(
    project: EvalProject,
) -> None:
    args = ("--evaltasks", "solo", "--evaltasks-chat-template=chatml")
    args += ("--evaltasks-system-prompt", "Be brief.", "--evaltasks-export=p.jsonl")
    result = project.run(*args, "--snapshot-update")  # update mode, new snapshots
    result.assert_outcomes(passed=1)
    records = _records(project.root / "p.jsonl")
    assert len(records) == 6
    record = records[0]
    assert record["chat_template"] == "chatml"
    assert record["prompt"].startswith("Be brief.\n\n")
    assert record["messages"][0] == {"role": "system", "content": "Be brief."}
    assert record["chat_template_text"].startswith("<|im_start|>system\nBe brief.<|im_end|>")
    assert record["chat_template_text"].endswith("<|im_start|>assistant\n")


def test_export_is_the_same_serially_and_under_xdist_in_both_modes(project: EvalProject) -> None:
    spec = ("--evaltasks", "mytask|1,solo,mytask:other@k=2|0")
    serial = project.run(*spec, "--snapshot-update", "--evaltasks-export=s.jsonl", "-p", "no:xdist")
    serial.assert_outcomes(passed=4)
    written = (project.root / "s.jsonl").read_bytes()
    assert written.count(b"\n") == 24
    parallel = project.run(*spec, "--snapshot-update", "--evaltasks-export=x.jsonl", "-n", "2")
    parallel.assert_outcomes(passed=4)
    parallel.stdout.fnmatch_lines(["*2 workers*", "24 prompts exported to x.jsonl"])
    assert (project.root / "x.jsonl").read_bytes() == written

    project.write_tasks(edited=(1,))  # compare mode, failing items: exported all the same
    serial = project.run(*spec, "--evaltasks-export=s.jsonl", "-p", "no:xdist")
    parallel = project.run(*spec, "--evaltasks-export=x.jsonl", "-n", "2")
    serial.assert_outcomes(failed=4)
    parallel.assert_outcomes(failed=4)
    edited = (project.root / "s.jsonl").read_bytes()
    assert edited != written and b"(edited)" in edited
    assert (project.root / "x.jsonl").read_bytes() == edited
    assert not [p.name for p in project.root.iterdir() if p.name.endswith(".evaltasks-tmp")]


def test_export_keeps_the_item_order_of_a_task_string(project: EvalProject) -> None:
    project.run("--evaltasks", "solo,mytask:sub", "--evaltasks-export=p.jsonl")
    tasks = [record["task"] for record in _records(project.root / "p.jsonl")]
    assert tasks == ["solo|0"] * 6 + ["mytask:sub|0"] * 6  # as asked, not sorted


@pytest.mark.parametrize(
    ("value", "setup", "message"),
    [
        ("out", "folder", "*--evaltasks-export=out: that is a directory; name a file*"),
        ("afile/p.jsonl", "file", "*afile is a file, so the folder afile cannot be created*"),
        ("r.md", "", "*--evaltasks-export=r.md: --evaltasks-report names the same file*"),
    ],
    ids=["folder", "under-a-file", "same-as-report"],
)
def test_an_export_path_it_cannot_write_is_a_usage_error(
    project: EvalProject, value: str, setup: str, message: str
) -> None:
    if setup == "folder":
        (project.root / "out").mkdir()
    elif setup == "file":
        (project.root / "afile").write_text("", encoding="utf-8")
    result = project.run(
        "--evaltasks", "solo", f"--evaltasks-export={value}", "--evaltasks-report=r.md"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not project.snapshots()  # nothing ran


def test_a_write_that_fails_at_the_end_fails_the_run_and_says_why(project: EvalProject) -> None:
    project.run("--evaltasks", "solo", "--snapshot-update").assert_outcomes(passed=1)
    # The destination turns into a folder after the checks before the run: the write fails.
    (project.root / "conftest.py").write_text(
        "import os\n\n\ndef pytest_sessionstart(session):\n    os.mkdir('p.jsonl')\n",
        encoding="utf-8",
    )
    result = project.run("--evaltasks", "solo", "--evaltasks-export=p.jsonl")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["evaltasks: error: the prompts were not exported: *p.jsonl*"])
    assert sorted(p.name for p in project.root.iterdir() if "p.jsonl" in p.name) == ["p.jsonl"]


def test_without_the_option_no_exporter_is_registered(project: EvalProject) -> None:
    (project.root / "conftest.py").write_text(
        "def pytest_sessionfinish(session):\n"
        "    plugin = session.config.pluginmanager.get_plugin('evaltasks-export')\n"
        "    print('exporter:', plugin is not None)\n",
        encoding="utf-8",
    )
    without = project.run("--evaltasks", "solo", "--snapshot-update", "-s")
    without.stdout.fnmatch_lines(["*exporter: False*"])
    with_it = project.run("--evaltasks", "solo", "-s", "--evaltasks-export=p.jsonl")
    with_it.stdout.fnmatch_lines(["*exporter: True*"])


def test_export_holds_each_rendering_of_a_task_in_the_runs_order(project: EvalProject) -> None:
    args = ("--evaltasks", "solo", "--evaltasks-renderings", "chatml plain")
    project.run(*args, "--snapshot-update", "--evaltasks-export=p.jsonl").assert_outcomes(passed=2)
    records = _records(project.root / "p.jsonl")
    assert [(r["item"], r["rendering"]) for r in records] == [("solo|0 [chatml]", "chatml")] * 6 + [
        ("solo|0", "plain")
    ] * 6
    assert all(r["chat_template_text"].startswith("<|im_start|>user") for r in records[:6])
    assert all(r["chat_template_text"] is None for r in records[6:])
    assert [r["prompt"] for r in records[:6]] == [r["prompt"] for r in records[6:]]
