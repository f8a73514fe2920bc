"""Rendering profiles end to end: one run checks each task as plain text and through chat
templates, each rendering its own item and snapshot file."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

INI = "[pytest]\nevaltasks_renderings = plain chatml\n"


def items(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith("evaltasks::")]


def test_each_rendering_is_its_own_item_and_snapshot(project: EvalProject) -> None:
    project.pytester.makeini(INI)
    collected = project.run("--evaltasks", "solo", "--collect-only", "-q")
    assert items(collected) == ["evaltasks::solo|0", "evaltasks::solo|0 [chatml]"]
    project.run("--evaltasks", "solo", "--snapshot-update").assert_outcomes(passed=2)
    plain = project.snapshot("solo|0").read_text(encoding="utf-8")
    chat = project.snapshot("solo|0 [chatml]").read_text(encoding="utf-8")
    assert "name: solo|0\n" in plain and "chat template" not in plain
    assert "name: solo|0 [chatml]\n" in chat
    assert "--- prompt (chat template chatml) ---" in chat and "| <|im_start|>user" in chat
    project.run("--evaltasks", "solo").assert_outcomes(passed=2)
    only_chat = project.run("--evaltasks", "solo", "-k", "chatml")
    only_chat.assert_outcomes(passed=1)


def test_all_checks_every_recorded_rendering_whatever_the_run_lists(
    project: EvalProject,
) -> None:
    project.pytester.makeini(INI)
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=6)
    project.pytester.makeini("[pytest]\n")
    everything = project.run("--evaltasks", "all")
    everything.assert_outcomes(passed=6)
    project.write_tasks(prefix="Question: ")
    changed = project.run("--evaltasks", "all")
    changed.assert_outcomes(failed=6)  # the chatml files are still checked, and fail


def test_a_system_rendering_needs_a_system_prompt(project: EvalProject) -> None:
    project.pytester.makeini("[pytest]\nevaltasks_renderings = plain chatml+system\n")
    missing = project.run("--evaltasks", "solo")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines(["*'chatml+system' needs a system prompt*"])
    project.pytester.makeini(
        "[pytest]\nevaltasks_renderings = plain chatml+system\n"
        "evaltasks_system_prompt = Be brief.\n"
    )
    project.run("--evaltasks", "solo", "--snapshot-update").assert_outcomes(passed=2)
    system = project.snapshot("solo|0 [chatml+system]").read_text(encoding="utf-8")
    assert 'system_prompt: "Be brief."' in system and "| Be brief." in system
    plain = project.snapshot("solo|0").read_text(encoding="utf-8")
    assert "system_prompt: null" in plain


def test_a_module_narrows_its_tasks_renderings(project: EvalProject) -> None:
    project.pytester.makeini(INI)
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=6)
    project.write_tasks(
        header='evaltasks_renderings = {"solo": ["plain"], "*": ["plain", "chatml"]}'
    )
    collected = project.run("--evaltasks", "solo", "--collect-only", "-q")
    assert items(collected) == ["evaltasks::solo|0"]
    under_all = project.run("--evaltasks", "all")
    under_all.stdout.fnmatch_lines(["*which its task module's evaltasks_renderings no longer*"])
    update = project.run("--evaltasks", "all", "--snapshot-update")
    assert update.ret == 0
    assert not project.snapshot("solo|0 [chatml]").exists()  # the orphan is deleted


def test_a_jinja_template_takes_its_tokens_from_a_tokenizer_config_beside_it(
    project: EvalProject,
) -> None:
    folder = project.root / "templates"
    folder.mkdir()
    (folder / "mistral.jinja").write_text(
        "{{ bos_token }}{% for m in messages %}[INST] {{ m['content'] }} [/INST]{% endfor %}",
        encoding="utf-8",
    )
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"bos_token": "<s>", "eos_token": "</s>"}), encoding="utf-8"
    )
    project.pytester.makeini("[pytest]\nevaltasks_renderings = templates/mistral.jinja\n")
    project.run("--evaltasks", "solo", "--snapshot-update").assert_outcomes(passed=1)
    text = project.snapshot("solo|0 [templates/mistral.jinja]").read_text(encoding="utf-8")
    assert "| <s>[INST]" in text
    override = project.run("--evaltasks", "solo", "--evaltasks-bos-token=<BOS>")
    override.assert_outcomes(failed=1)  # other tokens render another prompt: a setting
    assert "run settings" in project.failures(override)


def test_a_rendering_node_id_can_be_passed_back(project: EvalProject) -> None:
    project.pytester.makeini(INI)
    project.run("--evaltasks", "solo", "--snapshot-update").assert_outcomes(passed=2)
    again = project.run("evaltasks::solo|0 [chatml]")
    again.assert_outcomes(passed=1)


def test_renderings_and_a_single_chat_template_exclude_each_other(project: EvalProject) -> None:
    project.pytester.makeini(INI)
    result = project.run("--evaltasks", "solo", "--evaltasks-chat-template=chatml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*exclude each other*"])


def test_an_unknown_rendering_is_a_usage_error(project: EvalProject) -> None:
    project.pytester.makeini("[pytest]\nevaltasks_renderings = plain chatlm\n")
    result = project.run("--evaltasks", "solo")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*chatlm*did you mean chatml*"])
