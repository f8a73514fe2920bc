"""What a task's code reads, as the recorder observes it: files opened, folders listed, and not
the import system's own look-ups (which would make every change in a task folder select every
task of it)."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

from pytest_evaltasks.engine.inputs import (
    InputRecorder,
    inputs_of,
    is_folder,
    reach_of,
    recorded_input,
)


def test_a_listed_folder_is_recorded_with_a_trailing_separator(tmp_path: Path) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.txt").write_text("a", encoding="utf-8")
    with InputRecorder() as seen:
        names = sorted(path.name for path in folder.glob("*.txt"))
        os.listdir(folder)
        list(os.walk(folder))
    assert names == ["a.txt"]
    assert os.path.join(str(folder), "") in seen.files
    assert str(folder) not in seen.files  # a folder is never taken for a file of that name
    assert inputs_of((), seen.files, tmp_path) >= {os.path.join(str(folder), "")}


def test_the_import_system_listing_a_package_is_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "freshpkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "helper.py").write_text("VALUE = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    try:
        with InputRecorder() as seen:
            module = importlib.import_module("freshpkg.helper")
        assert module.VALUE == 1
        assert not any(is_folder(path) for path in seen.files), seen.files
        assert "freshpkg.helper" in seen.modules
    finally:
        for name in ("freshpkg.helper", "freshpkg"):
            sys.modules.pop(name, None)


def test_a_recorded_folder_keeps_its_slash_and_a_file_has_none(tmp_path: Path) -> None:
    assert recorded_input(os.path.join(str(tmp_path), "tasks", "parts", ""), tmp_path) == (
        "tasks/parts/"
    )
    assert recorded_input(str(tmp_path / "tasks" / "a.txt"), tmp_path) == "tasks/a.txt"
    assert is_folder("tasks/parts/") and not is_folder("tasks/a.txt")


def test_a_library_listing_for_project_code_is_recorded(tmp_path: Path) -> None:
    """A template loader listing its folder when the task's code asks it to."""
    import jinja2

    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "a.j2").write_text("{{ q }}", encoding="utf-8")
    loader = jinja2.FileSystemLoader(str(folder))
    with InputRecorder() as seen:
        assert loader.list_templates() == ["a.j2"]
    assert os.path.join(str(folder), "") in seen.files


def test_an_sqlite_database_the_code_opens_is_recorded(tmp_path: Path) -> None:
    import sqlite3

    database = tmp_path / "prompts.db"
    with InputRecorder() as seen:
        sqlite3.connect(database).close()
        sqlite3.connect(f"file:{database}?mode=ro", uri=True).close()
        sqlite3.connect(":memory:").close()
    assert str(database) in seen.files
    assert not any(path.endswith(":memory:") for path in seen.files)


def test_snapshots_record_project_files_and_the_index_also_what_lies_outside(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A helper from outside the project folder is no input a snapshot can record (its path
    would name this machine's folders), and a project file reached only through it is not one
    either (as before outside code was looked at); the module index, which is this machine's,
    keys on both, and on the installed package reached."""
    project = tmp_path / "project"
    (project / "tasks").mkdir(parents=True)
    (project / "tasks" / "reached_words.py").write_text("WORDS = 1\n", encoding="utf-8")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "far_helper.py").write_text("import reached_words\n", encoding="utf-8")
    site = tmp_path_factory.mktemp("venv") / "site-packages"
    (site / "far_package" / "sub").mkdir(parents=True)
    (site / "far_package" / "__init__.py").write_text("", encoding="utf-8")
    (site / "far_package" / "sub" / "__init__.py").write_text("", encoding="utf-8")
    for folder in (project / "tasks", elsewhere, site):
        monkeypatch.syspath_prepend(str(folder))
    try:
        for name in ("far_helper", "far_package.sub"):
            importlib.import_module(name)
        modules = ["far_helper", "far_package.sub"]
        assert inputs_of(modules, (), project) == set()
        reach = reach_of(modules, (), project)
        assert reach.outside == {str(elsewhere / "far_helper.py")}
        assert reach.project == {str(project / "tasks" / "reached_words.py")}
        assert reach.installed == {str(site / "far_package")}
    finally:
        for name in ("far_helper", "reached_words", "far_package.sub", "far_package"):
            sys.modules.pop(name, None)
