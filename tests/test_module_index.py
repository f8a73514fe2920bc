"""The verified module index: a run imports only the task modules that can define the names it
asks for, and anything the index cannot vouch for is imported."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_evaltasks import Registry
from pytest_evaltasks.engine.module_index import ModuleIndex, select_modules, updated
from pytest_evaltasks.engine.task_modules import discover

MODULE = """
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

def prompt(row, task_name):
    return Doc(query=row["q"], choices=[" a"], gold_index=0)

TASKS_TABLE = [LightevalTaskConfig(name=name, prompt_function=prompt, hf_repo="o/d",
    hf_subset="s", metrics=[Metrics.exact_match]) for name in {names!r}]
"""

ENV = "python 3.x; lighteval -"


def write(tasks: Path, module: str, *names: str, extra: str = "") -> Path:
    path = tasks / f"{module}.py"
    path.write_text(textwrap.dedent(MODULE.format(names=list(names))) + extra, encoding="utf-8")
    return path


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "_words.py").write_text('WORD = "x"\n', encoding="utf-8")
    write(folder, "mmlu", "mmlu:anatomy", "mmlu:virology")
    write(folder, "arc", "arc:easy", extra="from ._words import WORD\n")
    write(folder, "gsm", "gsm8k")
    return folder


def index_of(tasks: Path, environment: str = ENV) -> ModuleIndex:
    registry = Registry([tasks], data_dir=None)
    return updated(ModuleIndex(), registry, tasks.parent, environment)


def chosen(tasks: Path, index: ModuleIndex, *names: str, environment: str = ENV) -> list[str]:
    selection = select_modules(index, discover(tasks), list(names), environment)
    assert selection.modules is not None, selection.reason
    return sorted(path.name for path in selection.modules)


def test_only_the_modules_defining_the_names_are_imported(tasks: Path) -> None:
    index = index_of(tasks)
    assert chosen(tasks, index, "gsm8k") == ["gsm.py"]
    assert chosen(tasks, index, "mmlu") == ["mmlu.py"]  # a superset: every mmlu:* task
    assert chosen(tasks, index, "mmlu:virology", "arc:easy") == ["arc.py", "mmlu.py"]


def test_a_changed_module_is_imported_to_be_known(tasks: Path) -> None:
    index = index_of(tasks)
    write(tasks, "gsm", "gsm8k", "gsm_hard")
    assert chosen(tasks, index, "mmlu:anatomy") == ["gsm.py", "mmlu.py"]


def test_a_changed_import_time_input_is_seen(tasks: Path) -> None:
    index = index_of(tasks)
    (tasks / "_words.py").write_text('WORD = "y"\n', encoding="utf-8")
    assert chosen(tasks, index, "gsm8k") == ["arc.py", "gsm.py"]


def test_a_folder_listed_at_import_is_kept_verified(tasks: Path) -> None:
    """A module whose table comes from the files of a folder it lists: indexed (a folder is
    keyed by its listing), and a file added there is seen."""
    (tasks / "names").mkdir()
    (tasks / "names" / "one.txt").write_text("", encoding="utf-8")
    (tasks / "listed.py").write_text(
        textwrap.dedent(MODULE.format(names=[]))
        + "import pathlib\n"
        + "TASKS_TABLE = [LightevalTaskConfig(name=p.stem, prompt_function=prompt, "
        + "hf_repo='o/d', hf_subset='s', metrics=[Metrics.exact_match])\n"
        + "    for p in sorted((pathlib.Path(__file__).parent / 'names').iterdir())]\n",
        encoding="utf-8",
    )
    index = index_of(tasks)
    assert index.records[str(tasks / "listed.py")].names == ("one",)
    assert chosen(tasks, index, "gsm8k") == ["gsm.py"]  # verified: not imported
    (tasks / "names" / "two.txt").write_text("", encoding="utf-8")
    assert chosen(tasks, index, "gsm8k") == ["gsm.py", "listed.py"]


def test_a_new_module_is_imported(tasks: Path) -> None:
    index = index_of(tasks)
    write(tasks, "fresh", "fresh")
    assert chosen(tasks, index, "gsm8k") == ["fresh.py", "gsm.py"]


def test_another_lighteval_or_python_version_imports_everything(tasks: Path) -> None:
    index = index_of(tasks)
    upgraded = "python 3.x; lighteval 0.14.0"
    assert chosen(tasks, index, "gsm8k", environment=upgraded) == ["arc.py", "gsm.py", "mmlu.py"]


def test_a_name_the_index_does_not_know_means_importing_everything(tasks: Path) -> None:
    index = index_of(tasks)
    selection = select_modules(index, discover(tasks), ["gsm8kk"], ENV)
    assert selection.modules is None and "'gsm8kk' is not in the module index" in selection.reason


def test_a_broken_module_is_never_indexed(tasks: Path) -> None:
    (tasks / "broken.py").write_text("raise RuntimeError('no')\n", encoding="utf-8")
    index = index_of(tasks)
    assert str(tasks / "broken.py") not in index.records
    assert "broken.py" in chosen(tasks, index, "gsm8k")  # imported on every run


def test_the_index_reads_back_and_refuses_what_it_does_not_know(tasks: Path) -> None:
    index = index_of(tasks)
    assert ModuleIndex.from_json(index.to_json()) == index
    assert ModuleIndex.from_json({"version": 999, "modules": {}}).records == {}
    assert ModuleIndex.from_json("garbage").records == {}
