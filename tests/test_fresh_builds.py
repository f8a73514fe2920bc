"""A fresh process's reply stands for its build: the file laid out again from the facts and the
docs shown is the build's own text, byte for byte, in both formats' facts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest

from pytest_evaltasks import Registry
from pytest_evaltasks.engine.rendered import DocsRendered
from pytest_evaltasks.engine.run_settings import RunSettings
from pytest_evaltasks.plugin.builds import _from_json, reply_of
from pytest_evaltasks.snapshot.built import build_snapshot
from pytest_evaltasks.snapshot.check import FreshBuildError
from pytest_evaltasks.snapshot.facts import FORMAT_VERSION

TASKS = Path(__file__).resolve().parents[1] / "tasks"


@pytest.mark.parametrize("spec", ["arc:easy|3", "gsm8k|5", "truthfulqa:mc|0", "ifeval|0"])
@pytest.mark.parametrize("docs_shown", [0, 2, 50])
def test_the_reply_lays_out_the_builds_own_text(spec: str, docs_shown: int) -> None:
    registry = Registry([TASKS], data_dir=TASKS / "data")
    (task,) = registry.load(spec)
    built = build_snapshot(DocsRendered.of(task, task.build()), RunSettings(), root=TASKS.parent)
    reply = json.loads(json.dumps(reply_of(built, docs_shown, ["a finding"], [2, 3, 4])))
    fresh = _from_json(reply, docs_shown)
    assert fresh.text(docs_shown) == built.text(docs_shown)
    assert fresh.shown_text(docs_shown) == built.shown_text(docs_shown)
    assert fresh.facts_in(FORMAT_VERSION) == built.facts_in(FORMAT_VERSION)
    assert fresh.facts_in(4) == built.facts_in(4)
    assert fresh.facts_in(3) == built.facts_in(3)
    assert fresh.facts_in(2).hash_text == built.facts_in(2).hash_text
    assert fresh.facts_in(2).format_version == built.facts_in(2).format_version
    assert fresh.lint == ["a finding"]
    assert "text" not in reply  # the doc hashes cross the pipe once
    assert ("hashes" in reply["older"]["2"]) == (
        built.facts_in(2).hash_text != built.facts_in(FORMAT_VERSION).hash_text
    )
    assert "hashes" not in reply["older"]["3"]  # format 3 hashes docs as the current does


def test_a_reply_not_asked_for_older_formats_has_no_facts_in_them() -> None:
    registry = Registry([TASKS], data_dir=TASKS / "data")
    (task,) = registry.load("arc:easy|3")
    built = build_snapshot(DocsRendered.of(task, task.build()), RunSettings(), root=TASKS.parent)
    fresh = _from_json(json.loads(json.dumps(reply_of(built, 2, [], []))), 2)
    assert fresh.older == {} and fresh.facts_in(FORMAT_VERSION) == built.facts_in(FORMAT_VERSION)
    for older in (2, 3, 4):
        with pytest.raises(FreshBuildError, match=f"format {older}"):
            fresh.facts_in(older)


class _Process:
    """A stand-in fresh process: answers with a build, knows whether it was ended."""

    alive: ClassVar[list[_Process]] = []

    def __init__(self, module: str) -> None:
        self.module = module
        _Process.alive.append(self)

    def ask(self, request: dict[str, object]) -> dict[str, object]:
        return {"error": "a stand-in builds nothing"}

    def close(self) -> None:
        _Process.alive.remove(self)


def test_fresh_processes_are_bounded_and_the_least_recently_used_ends_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run over many modules keeps at most `MAX_ALIVE` processes (each holds what its module
    imported: about 400 MB for lm-eval); the one used last is kept."""
    from pytest_evaltasks.plugin import builds
    from pytest_evaltasks.plugin.profiles import Rendering

    monkeypatch.setattr(_Process, "alive", [])
    monkeypatch.setattr(
        builds._Child, "start", classmethod(lambda cls, job, seed, machine: _Process(job.module))
    )
    fresh = builds.FreshBuilds([TASKS], [], TASKS / "data", TASKS.parent, TASKS.parent, False, [])
    plain = Rendering("plain", RunSettings(), None, None)
    for module in ("a.py", "b.py", "a.py", "c.py", "d.py", "a.py"):
        with pytest.raises(FreshBuildError):
            fresh.build(Path(module), f"{module[0]}|0", 0, 0, plain, ())
        assert len(_Process.alive) <= builds.MAX_ALIVE
    assert [process.module for process in _Process.alive] == ["d.py", "a.py"]
    fresh.close()
    assert _Process.alive == []
