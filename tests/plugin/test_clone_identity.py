"""Two clones of one project, at two paths, under two hash seeds, record the same bytes.

The project holds what used to leak the machine into a snapshot: a metric object holding a
`functools.partial`, a closure, a slotted object and a set of strings (iterated in hash-seed
order); a custom metric whose `sample_level_fn` is a function of the task module (imported
under a private, path-derived package name); a helper module imported relatively;
`hf_data_files` built from `__file__`; a doc with `specific={1: "gold"}`; and an image given
as a path to a file of the project.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

# Each run is started under its own PYTHONHASHSEED, which only a new interpreter takes.
pytestmark = [pytest.mark.subprocess, pytest.mark.slow]

HELPERS = '''\
"""A helper module (never a task module: the leading `_`), imported relatively."""


def normalize(text, lang="en"):
    return text.lower() if lang == "en" else text.casefold()
'''

TASK_MODULE = """\
import dataclasses
import functools
import os

from pytest_evaltasks import Doc, LightevalTaskConfig

from ._helpers import normalize

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "demo", "main")


def exact(pred, gold):
    return float(normalize(pred) == normalize(gold))


def make_threshold(threshold):
    def passes(pred, gold):
        return exact(pred, gold) >= threshold

    return passes


class Slotted:
    __slots__ = ("threshold",)

    def __init__(self, threshold):
        self.threshold = threshold


@dataclasses.dataclass
class Metric:
    metric_name: str
    sample_level_fn: object
    category: str = "GENERATIVE"
    normalize_pred: object = None
    hooks: list = dataclasses.field(default_factory=list)
    stop_words: frozenset = frozenset()


def prompt(line, task_name):
    return Doc(
        task_name=task_name,
        query="Q: " + line["q"] + "\\nA:",
        choices=[" yes", " no"],
        gold_index=line["label"],
        specific={1: "gold"},
        images=[os.path.join(HERE, "img", "cat.png")],
    )


METRIC = Metric(
    "em",
    exact,
    normalize_pred=functools.partial(normalize, lang="fr"),
    hooks=[make_threshold(0.5), Slotted(0.5)],
    stop_words=frozenset(f"word{i}" for i in range(20)),
)

TASKS_TABLE = [
    LightevalTaskConfig(
        name="rich",
        prompt_function=prompt,
        hf_repo="demo",
        hf_subset="main",
        hf_data_files={split: os.path.join(DATA, split + ".jsonl") for split in ("test", "train")},
        metrics=[METRIC],
        solver=[functools.partial(normalize, lang="en")],
        evaluation_splits=["test"],
        few_shots_split="train",
        version=0,
    )
]
"""

ROWS = {
    "test": [f'{{"q": "question {i}", "label": {i % 2}}}' for i in range(5)],
    "train": [f'{{"q": "train {i}", "label": {i % 2}}}' for i in range(4)],
}

IMAGE = b"\x89PNG\r\n\x1a\n not really a picture"

EDIT = ("normalize(pred) == normalize(gold)", "normalize(pred) != normalize(gold)")
"""A metric function's body edited (its bytecode only: the same names, the same constants):
the `metrics` field must change, no prompt does."""


def write_rich_project(root: Path) -> Path:
    """The project: its own ini (the clone is the root directory), tasks, data and image."""
    tasks = root / "tasks"
    (tasks / "img").mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tasks / "_helpers.py").write_text(HELPERS, encoding="utf-8")
    (tasks / "rich.py").write_text(TASK_MODULE, encoding="utf-8")
    (tasks / "img" / "cat.png").write_bytes(IMAGE)
    data = tasks / "data" / "demo" / "main"
    data.mkdir(parents=True)
    for split, rows in ROWS.items():
        (data / f"{split}.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root


def run_in(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch, clone: Path, seed: str, *args: str
) -> pytest.RunResult:
    """`pytest --evaltasks rich|1 ARGS` started in `clone`, under PYTHONHASHSEED=`seed`."""
    monkeypatch.chdir(clone)
    monkeypatch.setenv("PYTHONHASHSEED", seed)
    return project.run("--evaltasks", "rich|1", *args)


def test_two_clones_record_the_same_bytes_and_check_each_other(
    project: EvalProject, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write_rich_project(pytester.path / "source")
    first = pytester.path / "clone-a" / "deep" / "x"
    second = pytester.path / "b"
    shutil.copytree(source, first)
    shutil.copytree(source, second)
    snapshots = Path("tasks", "__snapshots__")

    run_in(project, monkeypatch, first, "0", "--snapshot-update").assert_outcomes(passed=1)
    run_in(project, monkeypatch, second, "12345", "--snapshot-update").assert_outcomes(passed=1)

    recorded = project.snapshots(first / snapshots)
    assert len(recorded) == 1
    assert recorded == project.snapshots(second / snapshots)  # byte for byte, file by file
    text = next(iter(recorded.values())).decode("utf-8")
    for leak in (" at 0x", "_evaltasks_", str(pytester.path)):
        assert leak not in text
    assert "hash_seed" not in text  # not taken for a task whose prompts depend on the seed
    assert 'data_files: {"test": "tasks/data/demo/main/test.jsonl"' in text
    assert "metrics: Metric [em; GENERATIVE] #" in text
    assert "solver: " in text

    # Clone A's record, checked in clone B.
    shutil.rmtree(second / snapshots)
    shutil.copytree(first / snapshots, second / snapshots)
    run_in(project, monkeypatch, second, "12345").assert_outcomes(passed=1)

    # A metric function edited in clone B only: a scoring change without a version bump.
    module = second / "tasks" / "rich.py"
    edited = module.read_text(encoding="utf-8").replace(*EDIT)
    assert EDIT[1] in edited
    module.write_text(edited, encoding="utf-8")
    failed = run_in(project, monkeypatch, second, "12345")
    failed.assert_outcomes(failed=1)
    failure = project.failures(failed)
    assert "task fields changed (metrics)" in failure
    assert "its version is still 0" in failure
    assert "docs changed" not in failure
    assert project.snapshots(second / snapshots) == recorded


@pytest.mark.parametrize("folder", ["site-packages", "my-dist-packages-work"])
def test_a_clone_under_a_folder_named_like_site_packages_is_still_the_project(
    project: EvalProject, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, folder: str
) -> None:
    """Installed code is told by a `site-packages` folder below the project, never above it:
    a clone that sits under one (or under a folder whose name holds the word) records the same
    bytes as any clone, its helpers and data among its inputs, and a helper's edit is seen."""
    source = write_rich_project(pytester.path / "source")
    plain, odd = pytester.path / "plain", pytester.path / folder / "clone"
    shutil.copytree(source, plain)
    shutil.copytree(source, odd)
    snapshots = Path("tasks", "__snapshots__")
    run_in(project, monkeypatch, plain, "0", "--snapshot-update").assert_outcomes(passed=1)
    run_in(project, monkeypatch, odd, "0", "--snapshot-update").assert_outcomes(passed=1)
    recorded = project.snapshots(odd / snapshots)
    assert recorded == project.snapshots(plain / snapshots)
    text = next(iter(recorded.values())).decode("utf-8")
    assert "\ntasks/_helpers.py\n" in text and "\ntasks/data/demo/main/test.jsonl\n" in text
    helpers = odd / "tasks" / "_helpers.py"
    helpers.write_text(helpers.read_text(encoding="utf-8").replace(".lower()", ".upper()"))
    run_in(project, monkeypatch, odd, "0").assert_outcomes(failed=1)


JSON_TASK = """\
import os

from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

HERE = os.path.dirname(os.path.abspath(__file__))


def prompt(line, task_name):
    query = "Q: " + line["q"] + "\\\\nA:"
    return Doc(query=query, choices=[" yes", " no"], gold_index=line["label"])


TASKS_TABLE = [
    LightevalTaskConfig(name="jsonrows", prompt_function=prompt, hf_repo="json", hf_subset=None,
                        hf_data_files={{"test": {files}}}, evaluation_splits=["test"],
                        metrics=[Metrics.exact_match], version=0)
]
"""

DATA_FILES = {
    "from __file__": 'os.path.join(HERE, "..", "evaldata", "test.jsonl")',
    "relative": '"evaldata/test.jsonl"',
    "a glob from __file__": 'os.path.join(HERE, "..", "evaldata", "*.jsonl")',
    "a relative glob": '"evaldata/*.jsonl"',
}


def pytest_in(folder: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest in `folder`, in a fresh interpreter, with `cache` as the datasets cache."""
    env = {**os.environ, "HF_DATASETS_CACHE": str(cache), "HF_DATASETS_OFFLINE": "1",
           "HF_HUB_OFFLINE": "1"}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args],
        cwd=folder, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("files", list(DATA_FILES.values()), ids=list(DATA_FILES))
def test_a_record_made_with_a_warm_datasets_cache_holds_in_a_cold_clone(
    project: EvalProject, tmp_path_factory: pytest.TempPathFactory, files: str
) -> None:
    """`datasets` reads a warm cache instead of the task's files: the files its rows come from
    are recorded from `hf_data_files` itself, so the record made there holds in a clone at
    another path with an empty cache, and a changed row still fails there."""
    root = project.root
    (root / "tasks" / "demo.py").unlink()
    (root / "tasks" / "jsonrows.py").write_text(JSON_TASK.format(files=files), encoding="utf-8")
    rows = [{"q": f"question {i}", "label": i % 2} for i in range(4)]
    (root / "evaldata").mkdir()
    (root / "evaldata" / "test.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
    )
    warm = tmp_path_factory.mktemp("warm-cache")
    pytest_in(root, warm, "--evaltasks", "jsonrows")  # fills the cache (a new task: it fails)
    recorded = pytest_in(root, warm, "--evaltasks", "jsonrows", "--snapshot-update")
    assert recorded.returncode == 0, recorded.stdout
    (snapshot,) = (root / "tasks" / "__snapshots__").glob("jsonrows-*.txt")
    assert "\nevaldata/test.jsonl\n" in snapshot.read_text(encoding="utf-8")
    clone = tmp_path_factory.mktemp("elsewhere") / "clone"
    shutil.copytree(root, clone, ignore=shutil.ignore_patterns("__pycache__"))
    cold = tmp_path_factory.mktemp("cold-cache")
    fresh = pytest_in(clone, cold, "--evaltasks", "jsonrows")
    assert fresh.returncode == 0, fresh.stdout
    rows[2]["q"] = "question 2, changed"
    (clone / "evaldata" / "test.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
    )
    changed = pytest_in(clone, tmp_path_factory.mktemp("another-cache"), "--evaltasks", "jsonrows")
    assert changed.returncode == 1
    assert "1 of 4 docs changed (id 2)" in changed.stdout


SCORING = """\
def exact(pred, gold):
    return float(pred.strip() == gold.strip())
"""

MONOREPO_TASK = """\
import dataclasses

from pytest_evaltasks import Doc, LightevalTaskConfig
from scoring import exact


@dataclasses.dataclass
class Metric:
    metric_name: str
    sample_level_fn: object
    category: str = "GENERATIVE"


def prompt(line, task_name):
    return Doc(query="Q: " + line["q"], choices=[" yes", " no"], gold_index=line["label"])


TASKS_TABLE = [
    LightevalTaskConfig(name="mono", prompt_function=prompt, hf_repo="demo", hf_subset="main",
                        metrics=[Metric("em", exact)], evaluation_splits=["test"], version=0)
]
"""


def test_scoring_code_beside_the_root_in_a_monorepo_is_the_projects_own(
    project: EvalProject, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A metric whose function lives in the checkout but outside the root directory (a
    monorepo's `libs/`): editing its body is a scoring change the gate refuses without a
    version bump, and two clones at two paths record the same bytes."""
    records = []
    for name in ("repo-a", "deep/repo-b"):
        repo = pytester.path / name
        evals = repo / "evals"
        (repo / "libs").mkdir(parents=True)
        (repo / "libs" / "scoring.py").write_text(SCORING, encoding="utf-8")
        (evals / "tasks" / "data" / "demo" / "main").mkdir(parents=True)
        (evals / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        (evals / "conftest.py").write_text(
            "import os, sys\n"
            "sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'libs'))\n",
            encoding="utf-8",
        )
        (evals / "tasks" / "mono.py").write_text(MONOREPO_TASK, encoding="utf-8")
        (evals / "tasks" / "data" / "demo" / "main" / "test.jsonl").write_text(
            "".join(f'{{"q": "question {i}", "label": {i % 2}}}\n' for i in range(3)),
            encoding="utf-8",
        )
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        monkeypatch.chdir(evals)
        project.run("--evaltasks", "mono", "--snapshot-update").assert_outcomes(passed=1)
        records.append(project.snapshots(evals / "tasks" / "__snapshots__"))
    assert records[0] == records[1]
    scoring = pytester.path / "repo-a" / "libs" / "scoring.py"
    scoring.write_text(SCORING.replace(".strip() ==", ".strip().lower() =="), encoding="utf-8")
    monkeypatch.chdir(pytester.path / "repo-a" / "evals")
    failed = project.run("--evaltasks", "mono")
    failed.assert_outcomes(failed=1)
    failure = project.failures(failed)
    assert "task fields changed (metrics)" in failure
    assert "its version is still 0" in failure
