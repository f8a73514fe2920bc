"""`pytest --lf` without a task string: which task strings ask for the items that failed."""

from __future__ import annotations

from typing import Any

from pytest_evaltasks.errors import EvalTaskError
from pytest_evaltasks.plugin.plan import last_failed_specs, rerun_specs


class _Registry:
    """Knows `a` and `b`; any other name is unknown."""

    def resolve(self, name: str) -> list[Any]:
        if name.split("|")[0] not in ("a", "b"):
            raise EvalTaskError(f"unknown task: {name!r}")
        return [name]


def test_failed_task_items_are_asked_for_by_name_and_files_by_all() -> None:
    failed = {"evaltasks::b|5": True, "evaltasks::a|0": True, "tests/test_x.py::t": True}
    assert last_failed_specs(failed, "evaltasks::") == ["a|0,b|5"]
    with_module = {**failed, "evaltasks::tasks/broken.py": True}
    assert last_failed_specs(with_module, "evaltasks::") == ["all", "a|0,b|5"]
    assert last_failed_specs({"tests/test_x.py::t": True}, "evaltasks::") == []


def test_a_name_that_no_longer_resolves_widens_the_rerun_to_every_item() -> None:
    registry: Any = _Registry()
    assert rerun_specs(registry, ["a|0,b|5"]) == ["a|0,b|5"]
    assert rerun_specs(registry, ["a|0,renamed|0"]) == ["all", "a|0"]
    assert rerun_specs(registry, ["gone|0"]) == ["all"]
    assert rerun_specs(registry, ["all", "gone|0"]) == ["all"]
