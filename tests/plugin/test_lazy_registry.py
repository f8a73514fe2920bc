"""End to end: a run over some tasks imports only the modules that can define them, from the
verified module index in pytest's cache, and never finds less than a full import would."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import EvalProject


def test_a_second_run_imports_only_the_module_it_needs(project: EvalProject) -> None:
    project.write_tasks('name="other_module", version=0', module="more")
    first = project.run("--evaltasks", "solo", "--collect-only")
    assert "that can define the tasks asked for" not in first.stdout.str()  # no index yet
    second = project.run("--evaltasks", "solo", "--collect-only")
    second.stdout.fnmatch_lines(["*imported 1 task module that can define the tasks asked for*"])
    project.write_tasks('name="other_module", version=0', 'name="added"', module="more")
    added = project.run("--evaltasks", "added", "--collect-only", "-q")
    added.stdout.fnmatch_lines(["evaltasks::added|0"])  # the changed module was imported


def test_an_unknown_name_still_gets_every_close_match(project: EvalProject) -> None:
    project.write_tasks('name="other_module", version=0', module="more")
    project.run("--evaltasks", "solo", "--collect-only")
    result = project.run("--evaltasks", "other_modul")
    result.stderr.fnmatch_lines(["*'other_modul' (did you mean other_module?)*"])


def test_without_the_cache_every_module_is_imported(project: EvalProject) -> None:
    project.write_tasks('name="other_module", version=0', module="more")
    project.run("--evaltasks", "solo", "--collect-only")
    plain = project.run("--evaltasks", "solo", "--collect-only", "-p", "no:cacheprovider")
    assert "that can define the tasks asked for" not in plain.stdout.str()
    plain.stdout.fnmatch_lines(["*1 test collected*"])
