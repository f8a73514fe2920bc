"""Sample by sample, the plugin's rendering of inspect_evals' own tasks is what Inspect's own
eval loop sends its model, on synthetic rows (`inspect_rows`): the same samples (ids, targets,
choices) and the same messages for the first model call, role by role and text by text; and
two builds record the same samples (what Inspect makes at random, a message's id, is left out)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_evals")

from inspect_reference import reference
from inspect_rows import ARGS, TASKS, write_rows

from pytest_evaltasks.sources.inspect.adapter import (
    InspectRef,
    build,
    installed_package,
    installed_tasks,
)


@pytest.fixture(scope="module")
def refs() -> dict[str, InspectRef]:
    package = installed_package()
    assert package is not None
    return {ref.name: ref for ref in installed_tasks(package)}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_sample_is_what_inspect_sends(
    name: str, refs: dict[str, InspectRef], tmp_path: Path
) -> None:
    write_rows(tmp_path, name)
    ref, args = refs[name], ARGS.get(name, {})
    built = build(ref, None, args, tmp_path, None)
    again = build(ref, None, args, tmp_path, None)
    assert again.samples == built.samples, f"{name}: two builds record different samples"
    function = getattr(importlib.import_module(ref.module or ""), ref.function)
    expected = {str(sample["id"]): sample for sample in reference(function, args, tmp_path)}
    assert sorted(sample.label for sample in built.samples) == sorted(expected)
    assert built.total == len(expected) > 0
    for sample in built.samples:
        want = expected[sample.label]
        assert sample.sample.get("target", "") == want["target"], sample.label
        if want["choices"]:
            assert sample.sample.get("choices") == want["choices"], sample.label
        first = [(message["role"], _text(message["content"])) for message in sample.sent[0]]
        assert want["calls"], f"{name} {sample.label}: Inspect called no model"
        assert first == want["calls"][0], f"{name} {sample.label}"


def test_a_solver_that_calls_the_model_itself_gets_the_mock_reply_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent loop calls the active model itself: Inspect's mock answers, without counting
    tokens through tiktoken, whose encoding it would download (a wait for the network)."""
    import types

    import tiktoken.load
    from inspect_ai import Task, task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import get_model
    from inspect_ai.solver import solver

    def no_download(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("tiktoken downloads its encoding")

    monkeypatch.setattr(tiktoken.load, "read_file", no_download)

    @solver
    def ask_twice() -> Any:
        async def solve(state: Any, generate: Any) -> Any:
            reply = await get_model().generate(state.messages)
            state.messages.append(reply.message)
            return await generate(state)

        return solve

    @task
    def agent() -> Task:
        return Task(dataset=MemoryDataset([Sample(input="Hi?", target="x")]), solver=ask_twice())

    module = types.SimpleNamespace(agent=agent)
    ref = InspectRef("agent", "agent", None, tmp_path / "agent.py")
    (sample,) = build(ref, module, {}, tmp_path, None).samples
    roles = [(message["role"], message["content"]) for message in sample.sent[0]]
    assert roles == [("user", "Hi?"), ("assistant", "Default output from mockllm/model")]
