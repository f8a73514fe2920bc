"""The plugin over Inspect tasks, run as a user runs it (`pytest --evaltasks ...` in a fresh
interpreter): inspect_evals' own task from its installed folder and a user's `@task` file,
snapshots and the version gate, changed-only runs, show, export, lint and xdist."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("inspect_evals")

from inspect_rows import write_rows

QUIET = ("-p", "no:randomly", "-p", "no:hypothesispytest", "-p", "no:anyio")

QUIZ = """\
from inspect_ai import Task, task
from inspect_ai.dataset import FieldSpec, hf_dataset
from inspect_ai.scorer import match
from inspect_ai.solver import generate, prompt_template, system_message


@task
def quiz(style: str = "brief") -> Task:
    return Task(
        dataset=hf_dataset(
            "me/quiz", split="test", sample_fields=FieldSpec(input="q", target="a", id="id")
        ),
        solver=[system_message(f"Be {style}."), prompt_template("Question: {prompt}\\nAnswer:"),
                generate()],
        scorer=match(),
        version=VERSION,
    )
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(*QUIET, *args)


def quiz_project(root: Path, version: int = 0, template: str = "Question: {prompt}") -> Path:
    """A user's folder of `@task` files, with its rows in the data root."""
    tasks = root / "tasks"
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    data = tasks / "data" / "me" / "quiz" / "default"
    data.mkdir(parents=True, exist_ok=True)
    rows = [{"id": i, "q": f"What is {i} + {i}?", "a": str(2 * i)} for i in range(4)]
    (data / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    text = QUIZ.replace("VERSION", str(version)).replace("Question: {prompt}", template)
    (tasks / "quiz.py").write_text(text, encoding="utf-8")
    return tasks


def test_a_users_task_is_recorded_and_its_prompt_change_needs_a_version_bump(
    pytester: pytest.Pytester,
) -> None:
    tasks = quiz_project(pytester.path)
    run(pytester, "--evaltasks", "quiz", "--snapshot-update").assert_outcomes(passed=1)
    (snapshot,) = (tasks / "__snapshots__").glob("quiz-0--*.txt")
    text = snapshot.read_text(encoding="utf-8")
    assert "config_source: tasks/quiz.py\n" in text
    assert "| Be brief.\n" in text and "| Question: What is 1 + 1?\n" in text
    assert "\ntasks/data/me/quiz/default/test.jsonl\n" in text
    run(pytester, "--evaltasks", "quiz").assert_outcomes(passed=1)

    quiz_project(pytester.path, template="Q: {prompt}")
    failed = run(pytester, "--evaltasks", "quiz", "--snapshot-update")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*4 of 4 docs changed*solver*its version is still 0*"])
    step = "inspect_ai.solver._prompt:prompt_template.<locals>.solve"
    # the solver chain's change is named by its step and setting, not by two digests
    assert (
        f'    _solvers[1].prompt_template: "Question: {{prompt}}\\nAnswer:" -> '
        f'"Q: {{prompt}}\\nAnswer:" (in {step})'
    ) in failed.stdout.str()
    assert snapshot.read_text(encoding="utf-8") == text

    quiz_project(pytester.path, version=1, template="Q: {prompt}")
    run(pytester, "--evaltasks", "quiz", "--snapshot-update").assert_outcomes(passed=1)
    assert "| Q: What is 1 + 1?\n" in snapshot.read_text(encoding="utf-8")


def test_task_arguments_are_part_of_the_request(pytester: pytest.Pytester) -> None:
    tasks = quiz_project(pytester.path)
    run(pytester, "--evaltasks", "quiz@style='terse'", "--snapshot-update").assert_outcomes(
        passed=1
    )
    (snapshot,) = (tasks / "__snapshots__").glob("quiz-style*.txt")
    text = snapshot.read_text(encoding="utf-8")
    assert 'task_args: {"style": "terse"}' in text and "| Be terse.\n" in text


def test_an_installed_task_from_the_data_root_and_a_changed_row(pytester: pytest.Pytester) -> None:
    (pytester.path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    data = pytester.path / "tasks" / "data"
    write_rows(data, "inspect_evals/arc_easy")
    args = ("--evaltasks", "inspect_evals/arc_easy", "--evaltasks-dir", "inspect_evals:tasks")
    run(pytester, *args, "--snapshot-update").assert_outcomes(passed=1)
    (snapshot,) = (pytester.path / "tasks" / "__snapshots__").glob("inspect_evals-arc_easy-0*")
    text = snapshot.read_text(encoding="utf-8")
    assert "config_source: inspect_evals:arc\n" in text
    assert "inspect: inspect_ai " in text
    run(pytester, *args).assert_outcomes(passed=1)
    (rows_file,) = data.glob("**/test.jsonl")
    lines = rows_file.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["question"] = first["question"] + " (edited)"
    lines[0] = json.dumps(first)
    rows_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    failed = run(pytester, *args)
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*1 of * docs changed*"])


def test_show_export_lint_and_xdist(pytester: pytest.Pytester) -> None:
    quiz_project(pytester.path)
    shown = run(pytester, "--evaltasks", "quiz", "--evaltasks-show=1")
    assert shown.ret == 0
    shown.stdout.fnmatch_lines(["*message 2 of 2 (user)*", "| Question: What is 0 + 0?"])
    export = pytester.path / "prompts.jsonl"
    recorded = run(
        pytester, "--evaltasks", "quiz", "--snapshot-update", f"--evaltasks-export={export}",
        "--evaltasks-lint=error", "-n", "2",
    )  # fmt: skip
    recorded.assert_outcomes(passed=1)
    records = [json.loads(line) for line in export.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 4
    assert records[1]["messages"][-1]["content"] == "Question: What is 1 + 1?\nAnswer:"


def test_a_changed_task_file_is_selected_by_a_changed_only_run(pytester: pytest.Pytester) -> None:
    quiz_project(pytester.path)
    # what pytester's runs in a fresh interpreter leave in the project folder
    (pytester.path / ".gitignore").write_text("stdout\nstderr\nrunpytest-*\n", "utf-8")
    git = ("git", "-c", "user.name=t", "-c", "user.email=t@t")
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=pytester.path, check=True)
    run(pytester, "--evaltasks", "quiz", "--snapshot-update").assert_outcomes(passed=1)
    subprocess.run([*git, "add", "-A"], cwd=pytester.path, check=True)
    subprocess.run([*git, "commit", "-qm", "recorded"], cwd=pytester.path, check=True)
    nothing = run(pytester, "--evaltasks-changed=main", "--collect-only", "-q")
    assert "evaltasks::quiz|0" not in nothing.stdout.str()
    path = pytester.path / "tasks" / "quiz.py"
    path.write_text(path.read_text(encoding="utf-8") + textwrap.dedent("\n# edited\n"), "utf-8")
    selected = run(pytester, "--evaltasks-changed=main", "--collect-only", "-q")
    assert "evaltasks::quiz|0" in selected.stdout.str()


def test_a_task_that_shuffles_without_a_seed_records_the_same_bytes(
    pytester: pytest.Pytester,
) -> None:
    """boolq shuffles its samples with no seed: built under a fixed one, two runs record the
    same file and a check passes."""
    (pytester.path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    write_rows(pytester.path / "tasks" / "data", "inspect_evals/boolq")
    args = ("--evaltasks", "inspect_evals/boolq", "--evaltasks-dir", "inspect_evals:tasks")
    run(pytester, *args, "--snapshot-update").assert_outcomes(passed=1)
    (snapshot,) = (pytester.path / "tasks" / "__snapshots__").glob("inspect_evals-boolq-0*")
    first = snapshot.read_bytes()
    snapshot.unlink()
    run(pytester, *args, "--snapshot-update").assert_outcomes(passed=1)
    assert snapshot.read_bytes() == first
    run(pytester, *args).assert_outcomes(passed=1)


UPGRADE = """\
import inspect_ai.solver._multiple_choice as multiple_choice

import pytest_evaltasks.sources.inspect.adapter as adapter

# an upgrade of inspect_evals whose multiple-choice template words the question otherwise
multiple_choice.SINGLE_ANSWER_TEMPLATE = multiple_choice.SINGLE_ANSWER_TEMPLATE.replace(
    "Answer the following multiple choice question.", "Answer this multiple choice question."
)
adapter.versions = lambda: {"inspect_ai": "0.3.285", "inspect_evals": "0.27.0"}
"""


def test_an_upgrade_that_changes_inspect_evals_own_prompts_is_named_as_such(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The upgrade is simulated in every process of the run (a `sitecustomize` on the path:
    the checks rebuild in fresh processes too)."""
    (pytester.path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    write_rows(pytester.path / "tasks" / "data", "inspect_evals/arc_easy")
    args = ("--evaltasks", "inspect_evals/arc_easy", "--evaltasks-dir", "inspect_evals:tasks")
    run(pytester, *args, "--snapshot-update").assert_outcomes(passed=1)
    upgraded = pytester.path / "upgraded"
    upgraded.mkdir()
    (upgraded / "sitecustomize.py").write_text(UPGRADE, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(upgraded))
    compared = run(pytester, *args)
    compared.assert_outcomes(failed=1)
    compared.stdout.fnmatch_lines(
        ["*Inspect inspect_ai 0.3.285; inspect_evals 0.26.0 → inspect_ai 0.3.285; inspect_evals"
         " 0.27.0 changed these prompts*there is no version of yours to bump*"]
    )  # fmt: skip
    assert "bump the task's" not in compared.stdout.str()
    run(pytester, *args, "--snapshot-update").assert_outcomes(passed=1)
    (snapshot,) = (pytester.path / "tasks" / "__snapshots__").glob("inspect_evals-arc_easy-0*")
    assert "| Answer this multiple choice question." in snapshot.read_text(encoding="utf-8")


def test_a_task_that_cannot_be_built_is_one_clear_failure(pytester: pytest.Pytester) -> None:
    tasks = quiz_project(pytester.path)
    (tasks / "broken.py").write_text(
        "from inspect_ai import task\n\n\n@task\ndef broken():\n    return lambda: None\n",
        encoding="utf-8",
    )
    result = run(pytester, "--evaltasks", "broken,quiz@colour='red'", "--snapshot-update")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "task 'broken': its @task function returned a function, not an Inspect Task" in out
    assert "task 'quiz': its arguments do not fit" in out and "colour" in out
    assert "Traceback" not in out


def test_a_helper_the_task_file_imports_by_its_plain_name_is_an_input(
    pytester: pytest.Pytester,
) -> None:
    """As Inspect loads a task file, its folder is importable: a helper imported by its plain
    name is recorded among the task's inputs, and its edit selects the task and fails it."""
    tasks = quiz_project(pytester.path)
    (tasks / "_wording.py").write_text('STYLE = "brief"\n', encoding="utf-8")
    quiz = tasks / "quiz.py"
    text = quiz.read_text(encoding="utf-8")
    text = "from _wording import STYLE\n" + text.replace(
        'style: str = "brief"', "style: str = STYLE"
    )
    quiz.write_text(text, encoding="utf-8")
    git = ("git", "-c", "user.name=t", "-c", "user.email=t@t")
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=pytester.path, check=True)
    run(pytester, "--evaltasks", "quiz", "--snapshot-update").assert_outcomes(passed=1)
    (snapshot,) = (tasks / "__snapshots__").glob("quiz-0--*.txt")
    assert "\ntasks/_wording.py\n" in snapshot.read_text(encoding="utf-8")
    subprocess.run([*git, "add", "-A"], cwd=pytester.path, check=True)
    subprocess.run([*git, "commit", "-qm", "recorded"], cwd=pytester.path, check=True)
    (tasks / "_wording.py").write_text('STYLE = "thorough"\n', encoding="utf-8")
    selected = run(pytester, "--evaltasks-changed=main", "--collect-only", "-q")
    assert "evaltasks::quiz|0" in selected.stdout.str()
    failed = run(pytester, "--evaltasks", "quiz")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*4 of 4 docs changed*its version is still 0*"])


FETCHING = """\
import os

import fsspec
from inspect_ai import Task, task
from inspect_ai.dataset import FieldSpec, MemoryDataset, csv_dataset, hf_dataset
from inspect_ai.scorer import match
from inspect_ai.solver import generate, prompt_template

URL = "memory://files.example/quiz/extra.csv"
if os.environ.get("QUIZ_REMOTE_UP"):  # the URL's file, reachable only in the saving run
    with fsspec.open(URL, "w") as stream:
        stream.write("input,target\\nWhat is up?,sky\\nWhat is down?,floor\\n")


@task
def fetching() -> Task:
    rows = hf_dataset("json", data_files=os.path.abspath("raw/quiz.jsonl"), split="train",
                      sample_fields=FieldSpec(input="q", target="a", id="id"))
    return Task(
        dataset=MemoryDataset([*rows, *csv_dataset(URL)]),
        solver=[prompt_template("Q: {prompt}"), generate()],
        scorer=match(),
    )
"""


def test_save_data_keeps_a_tasks_dataset_slice_and_url_files_for_offline_runs(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--evaltasks-save-data` builds the task with what it fetches kept: the first rows of
    each split it reads through `datasets` and each URL file whole land in the data root, and
    a later run, with the source files gone, reads them there and records them as inputs."""
    tasks = pytester.path / "tasks"
    tasks.mkdir()
    (pytester.path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tasks / "fetching.py").write_text(FETCHING, encoding="utf-8")
    raw = pytester.path / "raw" / "quiz.jsonl"
    raw.parent.mkdir()
    rows = [{"id": i, "q": f"What is {i} + {i}?", "a": str(2 * i)} for i in range(9)]
    raw.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    offline = run(pytester, "--evaltasks", "fetching", "--evaltasks-save-data", "3")
    assert offline.ret == 1
    offline.stdout.fnmatch_lines([
        "*no local copy of memory://files.example/quiz/extra.csv at *"
        "tasks/data/files.example/quiz/extra.csv*",
        "nothing was saved*",
    ])  # fmt: skip
    assert not (tasks / "data").exists()

    monkeypatch.setenv("QUIZ_REMOTE_UP", "1")
    saved = run(pytester, "--evaltasks", "fetching", "--evaltasks-save-data", "3")
    assert saved.ret == 0, saved.stdout.str()
    saved.stdout.fnmatch_lines([
        "fetching|0: saved train 3 of 9 rows to tasks/data/json/default",
        "fetching|0: saved memory://files.example/quiz/extra.csv whole to "
        "tasks/data/files.example/quiz/extra.csv",
    ])  # fmt: skip
    slice_rows = (tasks / "data" / "json" / "default" / "train.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in slice_rows] == rows[:3]
    manifest = json.loads((tasks / "data" / "json" / "default" / "MANIFEST").read_text())
    assert manifest["split_sizes"] == {"train": 9} and manifest["split"] == "train"
    copy = tasks / "data" / "files.example" / "quiz" / "extra.csv"
    assert copy.read_text() == "input,target\nWhat is up?,sky\nWhat is down?,floor\n"

    monkeypatch.delenv("QUIZ_REMOTE_UP")
    raw.unlink()
    run(pytester, "--evaltasks", "fetching", "--snapshot-update").assert_outcomes(passed=1)
    (snapshot,) = (tasks / "__snapshots__").glob("fetching-0--*.txt")
    text = snapshot.read_text(encoding="utf-8")
    assert "docs: 5\n" in text
    copies = ["tasks/data/files.example/quiz/extra.csv", "tasks/data/json/default/train.jsonl"]
    assert "\n[inputs]\n" + "\n".join(copies) + "\n" in text

    copy.write_text("input,target\nWhat is up?,sky\nWhat is left?,floor\n", encoding="utf-8")
    changed = run(pytester, "--evaltasks", "fetching")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(["*1 of 5 docs changed*"])


DOWNLOADING = """\
from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.scorer import match
from inspect_ai.solver import generate, prompt_template
from inspect_ai.util import download
from inspect_evals.constants import INSPECT_EVALS_CACHE_PATH

URL = "https://files.example/quiz/rows.jsonl"
CACHED = INSPECT_EVALS_CACHE_PATH / "quiz" / "rows.jsonl"


@task
def downloading(style: str = "Q") -> Task:
    download(URL, "SHA", CACHED)
    return Task(dataset=json_dataset(str(CACHED)),
                solver=[prompt_template(style + ": {prompt}"), generate()], scorer=match())
"""


def test_a_downloaded_file_comes_from_the_data_root_not_a_cache(
    pytester: pytest.Pytester,
) -> None:
    """A file a task downloads into inspect_evals' cache (Inspect's checksummed `download()`)
    comes from its copy in the data root, and is recorded for each task: the cache is a folder
    of the process's own, written in records by a name of its own (every process records the
    same bytes), and the user's stays as it was."""
    import hashlib
    import os

    rows = b'{"input": "What is up?", "target": "sky"}\n'
    tasks = pytester.path / "tasks"
    copy = tasks / "data" / "files.example" / "quiz" / "rows.jsonl"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(rows)
    (pytester.path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    task = DOWNLOADING.replace("SHA", hashlib.sha256(rows).hexdigest())
    (tasks / "downloading.py").write_text(task, encoding="utf-8")

    result = run(pytester, "--evaltasks", "downloading@style='Q',downloading@style='A'",
                 "--snapshot-update")  # fmt: skip
    result.assert_outcomes(passed=2)
    snapshots = sorted((tasks / "__snapshots__").glob("downloading*.txt"))
    assert len(snapshots) == 2
    for snapshot in snapshots:
        text = snapshot.read_text(encoding="utf-8")
        assert "\n[inputs]\ntasks/data/files.example/quiz/rows.jsonl\n" in text
        digest = hashlib.sha256(rows).hexdigest()[:16]
        assert f"dataset: rows @ https://files.example/quiz/rows.jsonl (sha256:{digest})\n" in text
    user_cache = Path(os.environ["XDG_CACHE_HOME"])
    assert not list(user_cache.rglob("rows.jsonl"))


PICTURES = """\
import json
import shutil
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
from inspect_ai.scorer import match
from inspect_ai.solver import generate
from inspect_evals.utils.huggingface import snapshot_download


@task
def pictures() -> Task:
    folder = Path(snapshot_download(repo_id="me/pics", repo_type="dataset", revision="v1"))
    rows = json.loads((folder / "rows.json").read_text())
    return Task(
        dataset=MemoryDataset([
            Sample(id=row["id"], target=row["a"], metadata={"file": str(folder / row["image"])},
                   input=[ChatMessageUser(content=[
                       ContentText(text=row["q"]), ContentImage(image=str(folder / row["image"]))
                   ])])
            for row in rows
        ]),
        solver=[generate()],
        scorer=match(),
    )
"""


def test_a_hub_repositorys_files_come_from_the_data_root_and_record_the_same_in_any_clone(
    pytester: pytest.Pytester,
) -> None:
    """A task that downloads a Hub repository (`snapshot_download`, as inspect_evals' image
    tasks do) gets the files of its copy in the data root, `<data root>/datasets/<repo>/`, with
    no network; its samples name the files where the build put them, which a record writes the
    same in every clone, so two clones of one project record the same bytes."""
    rows = [{"id": i, "q": f"What is in picture {i}?", "a": "a cat", "image": f"img/{i}.png"}
            for i in range(2)]  # fmt: skip
    texts = []
    for clone in (pytester.path / "one", pytester.path / "elsewhere" / "two"):
        repo = clone / "tasks" / "data" / "datasets" / "me" / "pics"
        (repo / "img").mkdir(parents=True)
        (repo / "rows.json").write_text(json.dumps(rows), encoding="utf-8")
        for row in rows:
            (repo / row["image"]).write_bytes(b"PNG" + row["image"].encode())
        (clone / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        (clone / "tasks" / "pictures.py").write_text(PICTURES, encoding="utf-8")
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(clone)
            run(pytester, "--evaltasks", "pictures", "--snapshot-update").assert_outcomes(passed=1)
        (snapshot,) = (clone / "tasks" / "__snapshots__").glob("pictures*.txt")
        texts.append(snapshot.read_text(encoding="utf-8"))
    assert texts[0] == texts[1]
    assert "$INSPECT_EVALS_CACHE_DIR/hub/datasets/me/pics/img/1.png" in texts[0]
    assert "tasks/data/datasets/me/pics/img/0.png\n" in texts[0]  # an input of the task
    assert str(pytester.path) not in texts[0]


SCRIPTED = """\
import json
import shutil
import os

import datasets
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate
from inspect_evals.constants import INSPECT_EVALS_CACHE_PATH
from inspect_evals.hf_dataset_script_helper import load_hf_dataset_with_script


class Quiz(datasets.GeneratorBasedBuilder):
    BUILDER_CONFIGS = [datasets.BuilderConfig(name="default")]

    def _info(self):
        return datasets.DatasetInfo(features=datasets.Features(
            {"q": datasets.Value("string"), "a": datasets.Value("string")}))

    def _split_generators(self, dl_manager):
        return [datasets.SplitGenerator(name="test", gen_kwargs={"path": "rows.jsonl"})]

    def _generate_examples(self, path):
        with open(path, encoding="utf-8") as rows:
            for index, line in enumerate(rows):
                yield index, json.loads(line)


@task
def scripted() -> Task:
    return Task(
        dataset=load_hf_dataset_with_script(
            repo_id="me/scripted", builder_cls=Quiz, subset="default", split="test",
            cache_dir_fp=INSPECT_EVALS_CACHE_PATH / "scripted", revision="v1",
            record_to_sample=lambda row: Sample(input=row["q"], target=row["a"]), auto_id=True,
        ),
        solver=[generate()],
        scorer=match(),
    )
"""


def test_a_dataset_built_by_a_script_reads_the_data_root_on_every_run(
    pytester: pytest.Pytester,
) -> None:
    """inspect_evals' script-built datasets (bbq, medqa, apps) build from a Hub snapshot with
    `datasets`' builder: an edit of the snapshot's copy in the data root reaches the next run
    (no builder cache of an earlier run is read) and fails it, as any changed row does."""
    repo = pytester.path / "tasks" / "data" / "datasets" / "me" / "scripted"
    repo.mkdir(parents=True)
    rows = repo / "rows.jsonl"
    rows.write_text('{"q": "What is up?", "a": "sky"}\n{"q": "Down?", "a": "floor"}\n', "utf-8")
    (pytester.path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (pytester.path / "tasks" / "scripted.py").write_text(SCRIPTED, encoding="utf-8")
    run(pytester, "--evaltasks", "scripted", "--snapshot-update").assert_outcomes(passed=1)
    (snapshot,) = (pytester.path / "tasks" / "__snapshots__").glob("scripted*.txt")
    assert "What is up?" in snapshot.read_text(encoding="utf-8")
    # every build reads the data root (the download folder is the build's own): the record
    # made by the update's second build holds the file, and a compare right after passes
    assert "\ntasks/data/datasets/me/scripted/rows.jsonl\n" in snapshot.read_text("utf-8")
    run(pytester, "--evaltasks", "scripted").assert_outcomes(passed=1)

    rows.write_text('{"q": "What is left?", "a": "sky"}\n{"q": "Down?", "a": "floor"}\n', "utf-8")
    changed = run(pytester, "--evaltasks", "scripted")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(["*1 of 2 docs changed*"])


HERE_FILES = """\
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample, json_dataset
from inspect_ai.scorer import match
from inspect_ai.solver import generate, prompt_template

HERE = Path(__file__).parent


def with_notes(row: dict) -> Sample:
    return Sample(input=row["input"], target=row["target"],
                  files={"notes.txt": str(HERE / "notes.txt")})


@task
def here() -> Task:
    return Task(dataset=json_dataset(str(HERE / "quiz.jsonl"), with_notes),
                solver=[prompt_template("Q: {prompt}"), generate()], scorer=match(),
                sandbox=("docker", str(HERE / "compose.yaml")))
"""


def test_paths_a_task_names_from_its_file_record_the_same_in_another_clone(
    pytester: pytest.Pytester,
) -> None:
    """A task that names its files from `__file__` (its dataset, a sample's files, its
    sandbox's compose file) shows absolute paths, which differ from clone to clone: they are
    recorded relative to the root, so a clone elsewhere passes against the same snapshot."""
    one = pytester.path / "one"
    tasks = one / "tasks"
    tasks.mkdir(parents=True)
    (one / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tasks / "here.py").write_text(HERE_FILES, encoding="utf-8")
    row = {"input": "What is up?", "target": "sky"}
    (tasks / "quiz.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(one)
        run(pytester, "--evaltasks", "here", "--snapshot-update").assert_outcomes(passed=1)
    (snapshot,) = (tasks / "__snapshots__").glob("here*.txt")
    text = snapshot.read_text(encoding="utf-8")
    assert "dataset: quiz @ tasks/quiz.jsonl\n" in text
    assert 'sandbox: {"config": "tasks/compose.yaml", "type": "docker"}\n' in text
    assert str(pytester.path) not in text  # the sample's files: in its hash, not shown

    two = pytester.path / "elsewhere" / "two"
    shutil.copytree(one, two)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(two)
        run(pytester, "--evaltasks", "here").assert_outcomes(passed=1)


UNTARGETED = """\
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import generate


@task
def untargeted() -> Task:
    return Task(dataset=MemoryDataset([Sample(input="Tell me a joke.", metadata={"kind": "a"})]),
                solver=[generate()])
"""


def test_a_task_with_no_target_passes_against_its_own_record(pytester: pytest.Pytester) -> None:
    """A sample with no target (xstest's, graded by a model) shows an empty target line that
    ends in no space (which a reader strips): the next run finds the text as it wrote it."""
    tasks = pytester.path / "tasks"
    tasks.mkdir()
    (pytester.path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tasks / "untargeted.py").write_text(UNTARGETED, encoding="utf-8")
    run(pytester, "--evaltasks", "untargeted", "--snapshot-update").assert_outcomes(passed=1)
    (snapshot,) = (tasks / "__snapshots__").glob("untargeted*.txt")
    assert "\ntarget:\n" in snapshot.read_text(encoding="utf-8")
    run(pytester, "--evaltasks", "untargeted").assert_outcomes(passed=1)


IMAGES = """\
import base64
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
from inspect_ai.scorer import match
from inspect_ai.solver import generate

INLINE = "data:image/png;base64," + base64.b64encode(b"PNG inline").decode()


@task
def pictured() -> Task:
    images = ["img/0.png", INLINE, "https://pictures.example/cat.png"]
    return Task(
        dataset=MemoryDataset([
            Sample(id=n, target="a", input=[ChatMessageUser(content=[
                ContentText(text=f"What is in picture {n}?"), ContentImage(image=image)])])
            for n, image in enumerate(images)
        ]),
        solver=[generate()],
        scorer=match(),
    )
"""


def test_an_image_is_recorded_by_its_bytes_wherever_it_comes_from(
    pytester: pytest.Pytester,
) -> None:
    """What a model is sent is the image's bytes: a path (relative to the task's folder, as
    Inspect runs a task file), a data URI and a URL (its copy in the data root) are recorded by
    their digest, the project's file among the inputs; replacing only its bytes fails the full
    run and the changed-only run alike."""
    import hashlib

    tasks = pytester.path / "tasks"
    (pytester.path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tasks / "img").mkdir(parents=True)
    (tasks / "img" / "0.png").write_bytes(b"PNG zero")
    (tasks / "data" / "pictures.example").mkdir(parents=True)
    (tasks / "data" / "pictures.example" / "cat.png").write_bytes(b"PNG cat")
    (tasks / "pictured.py").write_text(IMAGES, encoding="utf-8")
    (pytester.path / ".gitignore").write_text("stdout\nstderr\nrunpytest-*\n", "utf-8")
    git = ("git", "-c", "user.name=t", "-c", "user.email=t@t")
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=pytester.path, check=True)
    export = pytester.path / "prompts.jsonl"
    recorded = run(pytester, "--evaltasks", "pictured", "--snapshot-update",
                   f"--evaltasks-export={export}")  # fmt: skip
    recorded.assert_outcomes(passed=1)
    sent = [json.loads(line)["messages"][0]["content"][1] for line in export.open()]
    assert [part["image"] for part in sent] == [
        "sha256:" + hashlib.sha256(data).hexdigest()
        for data in (b"PNG zero", b"PNG inline", b"PNG cat")
    ]
    (snapshot,) = (tasks / "__snapshots__").glob("pictured-0--*.txt")
    text = snapshot.read_text(encoding="utf-8")
    assert "\ntasks/img/0.png\n" in text and "\ntasks/data/pictures.example/cat.png\n" in text
    subprocess.run([*git, "add", "-A"], cwd=pytester.path, check=True)
    subprocess.run([*git, "commit", "-qm", "recorded"], cwd=pytester.path, check=True)
    for image in (tasks / "img" / "0.png", tasks / "data" / "pictures.example" / "cat.png"):
        original = image.read_bytes()
        image.write_bytes(b"another picture")
        changed = run(pytester, "--evaltasks-changed=main", "--evaltasks-base=main")
        changed.assert_outcomes(failed=1)
        run(pytester, "--evaltasks", "all", "--evaltasks-base=main").assert_outcomes(failed=1)
        image.write_bytes(original)


AGIE_SHAPE = """\
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate, prompt_template
from inspect_evals.utils import load_json_dataset


@task
def cached(cot: bool = False) -> Task:
    dataset = load_json_dataset(
        file_path="https://files.example/agie/lsat.jsonl",
        eval_name="agie_shape",
        cache_tag="lsat",
        sample_fields=lambda row: Sample(input=row["q"], target=row["a"]),
    )
    steps = "Think step by step. " if cot else ""
    return Task(dataset=dataset, solver=[prompt_template(steps + "{prompt}"), generate()],
                scorer=match())
"""


def test_a_file_a_loader_caches_from_a_url_is_recorded_by_its_url(
    pytester: pytest.Pytester,
) -> None:
    """inspect_evals' cached loaders write a URL's file into a folder of the build's own (agieval,
    sycophancy): the dataset is recorded by its URL and a digest of its content, never by that
    temporary path, so two builds and two runs record the same."""
    import hashlib

    rows = b'{"q": "Which is first?", "a": "A"}\n{"q": "Which is last?", "a": "B"}\n'
    tasks = pytester.path / "tasks"
    copy = tasks / "data" / "files.example" / "agie" / "lsat.jsonl"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(rows)
    (pytester.path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tasks / "cached.py").write_text(AGIE_SHAPE, encoding="utf-8")
    spec = "cached@cot=True,cached"
    run(pytester, "--evaltasks", spec, "--snapshot-update").assert_outcomes(passed=2)
    digest = hashlib.sha256(rows).hexdigest()[:16]
    for snapshot in (tasks / "__snapshots__").glob("cached*.txt"):
        text = snapshot.read_text(encoding="utf-8")
        assert f"https://files.example/agie/lsat.jsonl (sha256:{digest})" in text
        assert "$TMPDIR" not in text and "evaltasks-run" not in text
    run(pytester, "--evaltasks", spec).assert_outcomes(passed=2)


STATEFUL = """\
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate

from _order import rng


@task
def stateful() -> Task:
    words = ["alpha", "beta", "gamma", "delta"]
    samples = []
    for n in range(3):
        rng.shuffle(words)
        samples.append(Sample(id=n, input="Order: " + " ".join(words), target=words[0]))
    return Task(dataset=MemoryDataset(samples), solver=[generate()], scorer=match())
"""


def test_a_helper_with_a_generator_of_its_own_starts_at_its_seed_on_every_build(
    pytester: pytest.Pytester,
) -> None:
    """A task file's helper keeps `random.Random(42)` at module level: each build imports the
    file and its helpers afresh, as a new Inspect process does, so the two builds of a new
    record agree and a second record is the same bytes."""
    tasks = pytester.path / "tasks"
    tasks.mkdir()
    (pytester.path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tasks / "_order.py").write_text("import random\n\nrng = random.Random(42)\n", "utf-8")
    (tasks / "stateful.py").write_text(STATEFUL, encoding="utf-8")
    run(pytester, "--evaltasks", "stateful", "--snapshot-update").assert_outcomes(passed=1)
    (snapshot,) = (tasks / "__snapshots__").glob("stateful-0--*.txt")
    first = snapshot.read_bytes()
    snapshot.unlink()
    run(pytester, "--evaltasks", "stateful", "--snapshot-update").assert_outcomes(passed=1)
    assert snapshot.read_bytes() == first
    run(pytester, "--evaltasks", "stateful").assert_outcomes(passed=1)
