"""End to end: a run over some tasks imports only the modules that can define them, from the
verified module index in pytest's cache, and never finds less than a full import would."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

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


def test_an_upgraded_package_that_a_module_takes_its_names_from_is_seen(
    project: EvalProject, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`more.py`'s table comes from an installed package. Upgraded, the package makes it define
    `solo` as well: a full import finds the name defined twice, and so must a lazy run whose
    index was made before the upgrade (the module's file did not change)."""
    site = tmp_path_factory.mktemp("venv") / "lib" / "site-packages"
    (site / "more_names").mkdir(parents=True)
    init = site / "more_names" / "__init__.py"
    init.write_text("NAMES = ['other_module']\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site))
    project.write_tasks(
        "name=NAME, version=0", module="more", header="from more_names import NAMES\n"
    )
    more = project.root / "tasks" / "more.py"
    more.write_text(
        more.read_text(encoding="utf-8").replace(
            "    LightevalTaskConfig(**cfg(name=NAME, version=0)),",
            "    *(LightevalTaskConfig(**cfg(name=NAME, version=0)) for NAME in NAMES),",
        ),
        encoding="utf-8",
    )
    project.run("--evaltasks", "solo", "--collect-only")
    lazy = project.run("--evaltasks", "solo", "--collect-only")
    lazy.stdout.fnmatch_lines(["*imported 1 task module that can define the tasks asked for*"])
    init.unlink()  # as an installer writes a package anew
    init.write_text("NAMES = ['other_module', 'solo']\n", encoding="utf-8")
    upgraded = project.run("--evaltasks", "solo")
    full = project.run("--evaltasks", "solo", "-p", "no:cacheprovider")
    assert upgraded.ret == full.ret != 0
    for result in (upgraded, full):
        result.stderr.fnmatch_lines(["*'solo' is defined by more than one task file*"])
