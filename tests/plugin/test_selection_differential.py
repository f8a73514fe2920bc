"""A differential check of changed-only selection: one-file edits to a project whose tasks read
their inputs in many ways, each run both as CI runs it. Whatever the full run against the base
fails, the changed-only step must fail too; an unedited project passes in a fresh clone.

The project's tasks read: a helper module, a file at import, a file on every call, a file on
the first call only (cached for the next, and for a sibling task), a folder's listing, a
parquet file through pandas (native code: no open is seen), a `datasets` JSON file at import
(a cache could answer), an image their docs name, `hf_data_files` rows, and a file another
process reads. Every file of the project but the snapshots is edited once, with a seeded
random edit that changes what it holds.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from git_project import git

if TYPE_CHECKING:
    from conftest import EvalProject

pytestmark = pytest.mark.slow  # CI runs it; the quick start leaves it out (-m "not slow")

HELPERS = {
    "tasks/_wording.py": 'PREFIX = "Q: "\n',
    "tasks/assets/import.txt": "At import: ",
    "tasks/assets/call.txt": "Each call: ",
    "tasks/assets/first.txt": "First call: ",
    "tasks/assets/listed/a.txt": "Listed",
    "tasks/assets/style.jsonl": '{"p": "Styled:"}\n',
    "tasks/assets/process.txt": "Another process:",
    "evaldata/rows.jsonl": '{"q": "file row", "label": 0}\n{"q": "other row", "label": 1}\n',
    "README.md": "# a project\n",
}

MODULES = {
    "tasks/helper_task.py": "from ._wording import PREFIX\nprefix = lambda: PREFIX",
    "tasks/import_task.py": (
        "import os\nHERE = os.path.dirname(__file__)\n"
        "TEXT = open(os.path.join(HERE, 'assets', 'import.txt')).read()\nprefix = lambda: TEXT"
    ),
    "tasks/call_task.py": (
        "import os\nHERE = os.path.dirname(__file__)\n"
        "def prefix():\n    return open(os.path.join(HERE, 'assets', 'call.txt')).read()"
    ),
    "tasks/first_task.py": (
        "import os\nHERE = os.path.dirname(__file__)\n_SEEN = []\n"
        "def prefix():\n    if not _SEEN:\n"
        "        _SEEN.append(open(os.path.join(HERE, 'assets', 'first.txt')).read())\n"
        "    return _SEEN[0]"
    ),
    "tasks/listing_task.py": (
        "import os\nHERE = os.path.dirname(__file__)\n"
        "FOLDER = os.path.join(HERE, 'assets', 'listed')\n"
        "def prefix():\n"
        "    names = sorted(os.listdir(FOLDER))\n"
        "    return ''.join(open(os.path.join(FOLDER, n)).read() for n in names)"
    ),
    "tasks/parquet_task.py": (
        "import os, pandas\nHERE = os.path.dirname(__file__)\n"
        "TEXT = str(pandas.read_parquet(os.path.join(HERE, 'assets', 'table.parquet'))['p'][0])\n"
        "prefix = lambda: TEXT + ' '"
    ),
    "tasks/datasets_task.py": (
        "import datasets, os\nHERE = os.path.dirname(__file__)\n"
        "TEXT = datasets.load_dataset('json', data_files=os.path.join(HERE, 'assets', "
        "'style.jsonl'), split='train')[0]['p']\nprefix = lambda: TEXT + ' '"
    ),
    "tasks/process_task.py": (
        "import os, subprocess\nHERE = os.path.dirname(__file__)\n"
        "TEXT = subprocess.run(['cat', os.path.join(HERE, 'assets', 'process.txt')], "
        "capture_output=True, text=True).stdout\nprefix = lambda: TEXT + ' '"
    ),
}

TASKS = """\
{code}
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics


def prompt(row, task_name):
    return Doc(query=prefix() + row["q"], choices=[" yes", " no"], gold_index=row["label"])


TASKS_TABLE = [LightevalTaskConfig(name=name, prompt_function=prompt, hf_repo="demo",
               hf_subset="main", metrics=[Metrics.loglikelihood_acc], evaluation_splits=["test"],
               few_shots_split="train") for name in ({names})]
"""

PICTURED = """\
import os
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

HERE = os.path.dirname(__file__)


def prompt(row, task_name):
    return Doc(query=row["q"], choices=[" yes", " no"], gold_index=row["label"],
               images=[os.path.join(HERE, "assets", f"{row['label']}.png")])


def rows(row, task_name):
    return Doc(query="From a file: " + row["q"], choices=[" a", " b"], gold_index=row["label"])


TASKS_TABLE = [
    LightevalTaskConfig(name="pictured", prompt_function=prompt, hf_repo="demo",
                        hf_subset="main", metrics=[Metrics.loglikelihood_acc],
                        evaluation_splits=["test"], few_shots_split="train"),
    LightevalTaskConfig(name="filed", prompt_function=rows, hf_repo="json", hf_subset=None,
                        hf_data_files={"test": os.path.join(HERE, "..", "evaldata", "rows.jsonl")},
                        metrics=[Metrics.loglikelihood_acc], evaluation_splits=["test"]),
]
"""


def write_parquet(path: Path, text: str) -> None:
    code = "import pandas, sys; pandas.DataFrame({'p': [sys.argv[2]]}).to_parquet(sys.argv[1])"
    subprocess.run([sys.executable, "-c", code, str(path), text], check=True)


def build(project: EvalProject) -> list[str]:
    """Write, record and commit the project; its editable files, relative to the root."""
    root = project.root
    (root / "tasks" / "demo.py").unlink()
    for path, text in HELPERS.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    for path, code in MODULES.items():
        stem = Path(path).stem
        names = f'"{stem}", "{stem}_sibling"' if stem == "first_task" else f'"{stem}",'
        (root / path).write_text(TASKS.format(code=code, names=names), encoding="utf-8")
    (root / "tasks" / "pictured.py").write_text(PICTURED, encoding="utf-8")
    for label in (0, 1):
        (root / "tasks" / "assets" / f"{label}.png").write_bytes(b"\x89PNG" + bytes([label]))
    write_parquet(root / "tasks" / "assets" / "table.parquet", "Tabled:")
    (root / ".gitignore").write_text("stdout\nstderr\nrunpytest-*\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    recorded = project.run("--evaltasks", "all", "--snapshot-update")
    assert recorded.ret == 0, recorded.stdout.str()
    git(root, "add", "-A")
    git(root, "commit", "-qm", "recorded")
    listed = git(root, "ls-files").split()
    return sorted(path for path in listed if "__snapshots__" not in path)


def edit(root: Path, path: str, chance: random.Random) -> None:
    """Change what `path` holds, as a random one-file edit would."""
    file = root / path
    word = "".join(chance.choice("XYZ") for _ in range(3))
    if path.endswith(".parquet"):
        write_parquet(file, f"Tabled {word}:")
    elif path.endswith(".png"):
        file.write_bytes(file.read_bytes() + word.encode())
    elif path.endswith(".jsonl"):
        rows = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
        key = "p" if "p" in rows[0] else "q"
        rows[chance.randrange(len(rows))][key] += f" {word}"
        file.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    elif path.endswith(".py") and "TASKS_TABLE" in file.read_text(encoding="utf-8"):
        text = file.read_text(encoding="utf-8")
        file.write_text(text.replace('row["q"]', f'"{word} " + row["q"]', 1), "utf-8")
    elif path.endswith(".py"):
        text = file.read_text(encoding="utf-8")
        file.write_text(text.replace('"Q: "', f'"Q {word}: "'), encoding="utf-8")
    else:
        file.write_text(file.read_text(encoding="utf-8") + word, encoding="utf-8")


def failed(result: pytest.RunResult) -> set[str]:
    return {line.split()[1] for line in result.outlines if line.startswith("FAILED evaltasks::")}


EDITED = [
    *HELPERS,
    *MODULES,
    "tasks/pictured.py",
    "tasks/assets/1.png",
    "tasks/assets/table.parquet",
    "tasks/data/demo/main/test.jsonl",
]


@pytest.mark.parametrize("path", EDITED)
def test_the_changed_only_step_fails_whatever_the_full_run_fails(
    project: EvalProject, path: str
) -> None:
    files = build(project)
    assert path in files
    edit(project.root, path, random.Random(path))
    full = failed(project.run("--evaltasks", "all", "--evaltasks-base=main"))
    changed_run = project.run(
        "--evaltasks", "all", "--evaltasks-changed=main", "--evaltasks-base=main"
    )
    changed = failed(changed_run)
    assert full <= changed, (path, full - changed, changed_run.stdout.str())
    if path != "README.md":
        assert full, f"an edit of {path} changed no prompt: the edit proves nothing"


def test_the_unedited_project_passes_in_a_fresh_clone(
    project: EvalProject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    build(project)
    clone = tmp_path_factory.mktemp("clone") / "project"
    git(project.root, "clone", "-q", str(project.root), str(clone))
    home = tmp_path_factory.mktemp("home")
    project.pytester._monkeypatch.setenv("HOME", str(home))
    project.pytester._monkeypatch.setenv("TMPDIR", str(tmp_path_factory.mktemp("tmp")))
    checked = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "--evaltasks", "all",
         "--evaltasks-base=main", "--rootdir", str(clone)],
        cwd=clone, capture_output=True, text=True,
    )  # fmt: skip
    assert checked.returncode == 0, textwrap.shorten(checked.stdout, 4000)
