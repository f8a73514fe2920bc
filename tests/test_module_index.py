"""The verified module index: a run imports only the task modules that can define the names it
asks for, and anything the index cannot vouch for is imported."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator
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


HELPED = """
from {package} import NAMES
TASKS_TABLE = [LightevalTaskConfig(name=name, prompt_function=prompt, hf_repo="o/d",
    hf_subset="s", metrics=[Metrics.exact_match]) for name in NAMES]
"""


def helped_module(tasks: Path, package: str) -> None:
    """A task module whose names come from `package` (installed, or elsewhere on sys.path)."""
    text = textwrap.dedent(MODULE.format(names=[])) + textwrap.dedent(
        HELPED.format(package=package)
    )
    (tasks / "helped.py").write_text(text, encoding="utf-8")


def replace_file(path: Path, text: str) -> None:
    """Write a file anew, as an installer does: removed, then written (a new inode)."""
    path.unlink()
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def sys_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], None]]:
    """Put a folder on sys.path for the test; the modules imported from it are forgotten."""
    before = set(sys.modules)

    def prepend(folder: Path) -> None:
        monkeypatch.syspath_prepend(str(folder))

    yield prepend
    for name in set(sys.modules) - before:
        del sys.modules[name]


def test_an_upgraded_installed_package_the_module_imports_is_seen(
    tasks: Path, tmp_path_factory: pytest.TempPathFactory, sys_path: Callable[[Path], None]
) -> None:
    """Not only lighteval: any installed package a module's table comes from."""
    site = tmp_path_factory.mktemp("venv") / "lib" / "site-packages"
    (site / "tasknames").mkdir(parents=True)
    (site / "tasknames" / "__init__.py").write_text("NAMES = ['helped:one']\n", encoding="utf-8")
    sys_path(site)
    helped_module(tasks, "tasknames")
    index = index_of(tasks)
    record = index.records[str(tasks / "helped.py")]
    assert record.names == ("helped:one",)
    assert record.installed == (str(site / "tasknames"),)
    assert chosen(tasks, index, "gsm8k") == ["gsm.py"]  # verified: not imported
    replace_file(site / "tasknames" / "__init__.py", "NAMES = ['helped:one', 'gsm8k']\n")
    assert chosen(tasks, index, "gsm8k") == ["gsm.py", "helped.py"]


def test_an_upgrade_that_leaves_the_top_level_entry_as_it_was_is_seen(
    tasks: Path, tmp_path_factory: pytest.TempPathFactory, sys_path: Callable[[Path], None]
) -> None:
    """A namespace package (no `__init__.py` at its top, so its folder is the entry) whose
    upgrade rewrites only a subpackage, as an installer that keeps files' times would: the
    distribution's metadata folder, named by its version, is what changes."""
    site = tmp_path_factory.mktemp("venv") / "lib" / "site-packages"
    (site / "spaced" / "names").mkdir(parents=True)
    (site / "spaced" / "names" / "__init__.py").write_text(
        "NAMES = ['helped:one']\n", encoding="utf-8"
    )
    (site / "spaced_names-1.0.dist-info").mkdir()
    sys_path(site)
    helped_module(tasks, "spaced.names")
    index = index_of(tasks)
    assert index.records[str(tasks / "helped.py")].installed == (str(site / "spaced"),)
    assert chosen(tasks, index, "gsm8k") == ["gsm.py"]
    (site / "spaced_names-1.0.dist-info").rename(site / "spaced_names-2.0.dist-info")
    assert chosen(tasks, index, "gsm8k") == ["gsm.py", "helped.py"]


def test_an_edited_helper_outside_the_project_folder_is_seen(
    tasks: Path, tmp_path_factory: pytest.TempPathFactory, sys_path: Callable[[Path], None]
) -> None:
    """A helper from a sibling checkout on sys.path (or an editable install's sources): read
    by its bytes, as a project file is, and followed to what it imports."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "shared_names.py").write_text(
        "from shared_more import MORE\nNAMES = ['helped:one', *MORE]\n", encoding="utf-8"
    )
    (elsewhere / "shared_more.py").write_text("MORE = ['helped:more']\n", encoding="utf-8")
    sys_path(elsewhere)
    helped_module(tasks, "shared_names")
    index = index_of(tasks)
    assert index.records[str(tasks / "helped.py")].names == ("helped:more", "helped:one")
    assert chosen(tasks, index, "gsm8k") == ["gsm.py"]
    for name, text in [
        ("shared_more.py", "MORE = ['gsm8k']\n"),
        ("shared_names.py", "NAMES = ['gsm8k']\n"),
    ]:
        before = (elsewhere / name).read_text(encoding="utf-8")
        (elsewhere / name).write_text(text, encoding="utf-8")
        assert chosen(tasks, index, "gsm8k") == ["gsm.py", "helped.py"], name
        (elsewhere / name).write_text(before, encoding="utf-8")
        assert chosen(tasks, index, "gsm8k") == ["gsm.py"], name


def test_what_the_interpreter_opens_outside_the_project_leaves_a_module_indexed(
    tasks: Path,
) -> None:
    """A module whose import reads `/proc`, a device and a temporary file it then deletes (as
    torch's import does) is indexed, and its record holds on the next run: such files change
    from run to run or vanish, and are not part of its key."""
    (tasks / "noisy.py").write_text(
        textwrap.dedent(MODULE.format(names=["noisy"]))
        + "import os, tempfile\n"
        + "os.close(os.open(os.devnull, os.O_RDONLY))\n"
        + "open('/proc/self/stat').close()\n"
        + "with tempfile.NamedTemporaryFile() as scratch:\n"
        + "    open(scratch.name).close()\n",
        encoding="utf-8",
    )
    index = index_of(tasks)
    record = index.records[str(tasks / "noisy.py")]
    assert record.names == ("noisy",) and record.inputs == ()
    assert chosen(tasks, index, "gsm8k") == ["gsm.py"]
