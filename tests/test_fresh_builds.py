"""A fresh process's reply stands for its build: the file laid out again from the facts and the
docs shown is the build's own text, byte for byte, in both formats' facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_evaltasks import Registry
from pytest_evaltasks.engine.rendered import DocsRendered
from pytest_evaltasks.plugin.builds import _from_json, reply_of
from pytest_evaltasks.snapshot.built import build_snapshot
from pytest_evaltasks.snapshot.check import FreshBuildError
from pytest_evaltasks.snapshot.settings import RunSettings

TASKS = Path(__file__).resolve().parents[1] / "tasks"


@pytest.mark.parametrize("spec", ["arc:easy|3", "gsm8k|5", "truthfulqa:mc|0", "ifeval|0"])
@pytest.mark.parametrize("docs_shown", [0, 2, 50])
def test_the_reply_lays_out_the_builds_own_text(spec: str, docs_shown: int) -> None:
    registry = Registry([TASKS], data_dir=TASKS / "data")
    (task,) = registry.load(spec)
    built = build_snapshot(DocsRendered.of(task, task.build()), RunSettings(), root=TASKS.parent)
    reply = json.loads(json.dumps(reply_of(built, docs_shown, ["a finding"], [2, 3])))
    fresh = _from_json(reply, docs_shown)
    assert fresh.text(docs_shown) == built.text(docs_shown)
    assert fresh.shown_text(docs_shown) == built.shown_text(docs_shown)
    assert fresh.facts_in(4) == built.facts_in(4)
    assert fresh.facts_in(3) == built.facts_in(3)
    assert fresh.facts_in(2).hash_text == built.facts_in(2).hash_text
    assert fresh.facts_in(2).format_version == built.facts_in(2).format_version
    assert fresh.lint == ["a finding"]
    assert "text" not in reply  # the doc hashes cross the pipe once
    assert ("hashes" in reply["older"]["2"]) == (
        built.facts_in(2).hash_text != built.facts_in(4).hash_text
    )
    assert "hashes" not in reply["older"]["3"]  # format 3 hashes docs as format 4 does


def test_a_reply_not_asked_for_older_formats_has_no_facts_in_them() -> None:
    registry = Registry([TASKS], data_dir=TASKS / "data")
    (task,) = registry.load("arc:easy|3")
    built = build_snapshot(DocsRendered.of(task, task.build()), RunSettings(), root=TASKS.parent)
    fresh = _from_json(json.loads(json.dumps(reply_of(built, 2, [], []))), 2)
    assert fresh.older == {} and fresh.facts_in(4) == built.facts_in(4)
    for older in (2, 3):
        with pytest.raises(FreshBuildError, match=f"format {older}"):
            fresh.facts_in(older)
