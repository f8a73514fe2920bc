"""The plugin over lm-eval tasks, run as a user runs it (`pytest --evaltasks ...`): lm-eval's
installed tasks and a custom YAML folder, snapshots and the version gate, groups and their
overrides, the export, xdist, the determinism checks, changed-only runs, `all`, show,
did-you-mean, data slices.

Runs are in this process (pytester's in-process run), which saves an interpreter's start and
lm-eval's imports per run; the builds the plugin itself starts in a fresh process (the
determinism checks) still are, and so are runs under xdist (`fresh=True`)."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import pkgutil
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

lm_eval = pytest.importorskip("lm_eval")

from lm_eval_rows import write_rows  # noqa: E402

QUIET = ("-p", "no:randomly", "-p", "no:hypothesispytest", "-p", "no:anyio")


def run(pytester: pytest.Pytester, *args: str, fresh: bool = False) -> pytest.RunResult:
    """A user's run (offline: the conftest sets HF_HUB_OFFLINE and HF_DATASETS_OFFLINE), in
    this process or, with `fresh=True`, in a fresh interpreter."""
    if fresh:
        return pytester.runpytest_subprocess(*QUIET, *args)
    return pytester.runpytest_inprocess(*QUIET, *args)


@pytest.fixture(scope="session")
def imported(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Everything an lm-eval run imports, imported before pytester snapshots sys.modules (a
    session fixture is set up before the function-scoped pytester): pytester drops what a run
    imported, and torch (which lm-eval's `simple_evaluate` seeds), numpy and datasets cannot be
    imported twice in a process. A task built once here imports them all."""
    from pytest_evaltasks.engine.registry import Registry

    for name in ("pytest_evaltasks", "syrupy"):
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, f"{name}."):
            with contextlib.suppress(ImportError):
                importlib.import_module(module.name)
    tasks = quiz_project(tmp_path_factory.mktemp("imports"))
    registry = Registry([tasks], [], tasks / "data", wanted=["quiz"])
    for request in registry.resolve("quiz|1"):
        registry.render(request)


@pytest.fixture(autouse=True)
def in_process(imported: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests rewrite hook modules within a second; a cached .pyc must not hide an edit."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


QUIZ = """\
    include: _quiz_template
    task: quiz
    dataset_path: me/quiz
    process_docs: !function utils.process_docs
    doc_to_text: "Q: {{question}}\\nA:"
    doc_to_target: "{{answer}}"
    doc_to_choice: ["yes", "no"]
    metadata:
      version: 1.0
    """


def quiz_project(root: Path, rows: int = 4) -> Path:
    """A custom YAML folder `tasks/` with a template, a hook module and local rows."""
    tasks = root / "tasks"
    write(tasks / "_quiz_template", "output_type: multiple_choice\ntest_split: test\n"
          "training_split: train\nmetric_list:\n  - metric: acc\n")  # fmt: skip
    write(
        tasks / "utils.py",
        """\
        def process_docs(dataset):
            return dataset.map(lambda row: {"question": row["q"].strip()})
        """,
    )
    write(tasks / "quiz.yaml", QUIZ)
    data = tasks / "data" / "me" / "quiz" / "default"
    for split, count in (("test", rows), ("train", 3)):
        lines = [json.dumps({"q": f" Is {split} {i} odd? ", "answer": i % 2}) for i in range(count)]
        write(data / f"{split}.jsonl", "\n".join(lines) + "\n")
    return tasks


def test_a_custom_folder_is_snapshot_tested_under_the_version_gate(
    pytester: pytest.Pytester,
) -> None:
    tasks = quiz_project(pytester.path)
    run(pytester, "--evaltasks", "quiz|1", "--snapshot-update").assert_outcomes(passed=1)
    (snapshot,) = (tasks / "__snapshots__").glob("quiz-1--*.txt")
    text = snapshot.read_text()
    assert "version: 1.0\n" in text and "config_source: tasks/quiz.yaml\n" in text
    assert "| Q: Is test 0 odd?\n| A:" in text
    assert "tasks/utils.py\n" in text and "tasks/_quiz_template\n" in text  # [inputs]
    run(pytester, "--evaltasks", "quiz|1").assert_outcomes(passed=1)
    yaml = tasks / "quiz.yaml"
    yaml.write_text(yaml.read_text().replace("Q: {{question}}", "Question: {{question}}"))
    failed = run(pytester, "--evaltasks", "quiz|1")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*quiz|1: 4 of 4 docs changed*its version is still 1.0*"])
    yaml.write_text(yaml.read_text().replace("version: 1.0", "version: 1.1"))
    run(pytester, "--evaltasks", "quiz|1").stdout.fnmatch_lines(["*version 1.0 -> 1.1*"])
    run(pytester, "--evaltasks", "quiz|1", "--snapshot-update").assert_outcomes(passed=1)
    run(pytester, "--evaltasks", "quiz|1").assert_outcomes(passed=1)


def test_lm_evals_own_task_with_the_export_holding_its_requests(
    pytester: pytest.Pytester,
) -> None:
    from lm_eval_reference import reference

    data = pytester.path / "tasks" / "data"
    write_rows(data, "arc_easy")
    export = pytester.path / "prompts.jsonl"
    args = ("--evaltasks", "arc_easy|2", "--evaltasks-dir=lm_eval:tasks")
    run(pytester, *args, "--snapshot-update").assert_outcomes(passed=1)
    result = run(pytester, *args, f"--evaltasks-export={export}")
    result.assert_outcomes(passed=1)
    (snapshot,) = (pytester.path / "tasks" / "__snapshots__").glob("arc_easy-2--*.txt")
    assert "config_source: lm_eval:tasks/arc/arc_easy.yaml\n" in snapshot.read_text()
    lines = [json.loads(line) for line in export.read_text().splitlines()]
    theirs = reference("arc_easy", 2, data)
    assert [line["doc_id"] for line in lines] == [doc.doc_id for doc in theirs]
    for line, doc in zip(lines, theirs, strict=True):
        assert [(r["type"], r["arguments"]) for r in line["requests"]] == [
            (kind, list(args)) for kind, args, _, _ in doc.requests
        ]
        assert line["fewshot_ids"] == doc.fewshot_ids and line["target"] == doc.target


def test_a_group_expands_to_its_tasks_and_names_those_it_changes(
    pytester: pytest.Pytester,
) -> None:
    tasks = pytester.path / "tasks"
    write_rows(tasks / "data", "arc_easy")
    write_rows(tasks / "data", "boolq")
    write(
        tasks / "suite.yaml",
        """\
        group: suite
        task:
          - boolq
          - task: arc_easy
            num_fewshot: 1
        metadata:
          version: 1.0
        """,
    )
    result = run(pytester, "--evaltasks", "suite", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["evaltasks::boolq|0", "evaltasks::suite::arc_easy|1"])
    run(pytester, "--evaltasks", "suite", "--snapshot-update").assert_outcomes(passed=2)
    (variant,) = (tasks / "__snapshots__").glob("suite-arc_easy-1--*.txt")
    assert "group: suite\n" in variant.read_text()
    assert "num_fewshot: 1\n" in variant.read_text()
    result = run(pytester, "--evaltasks", "all", "-n", "2", fresh=True)
    result.assert_outcomes(passed=2)


def test_an_unknown_name_is_a_usage_error_with_close_names(pytester: pytest.Pytester) -> None:
    quiz_project(pytester.path)
    result = run(pytester, "--evaltasks", "quizz|0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'quizz' (did you mean quiz*"])


def test_hooks_drawing_from_the_global_random_are_checked_for_determinism(
    pytester: pytest.Pytester,
) -> None:
    tasks = quiz_project(pytester.path)
    utils = tasks / "utils.py"
    utils.write_text(
        "import random\n\n"
        "def process_docs(dataset):\n"
        "    return dataset.map(\n"
        "        lambda row: {'question': row['q'].strip() + str(random.random())})\n"
    )
    run(pytester, "--evaltasks", "quiz|0", "--snapshot-update").assert_outcomes(passed=1)
    run(pytester, "--evaltasks", "quiz|0").assert_outcomes(passed=1)  # seeded as lm-eval seeds
    utils.write_text(
        "import os\n\n"
        "def process_docs(dataset):\n"
        "    return dataset.map(lambda row: {'question': row['q'] + os.urandom(4).hex()})\n"
    )
    result = run(pytester, "--evaltasks", "quiz|0", "--snapshot-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*nondeterministic*"])


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_a_changed_only_run_follows_includes_hooks_and_data(pytester: pytest.Pytester) -> None:
    tasks = quiz_project(pytester.path)
    write(tasks / "other.yaml", QUIZ.replace("task: quiz", "task: other").replace(
        "include: _quiz_template", "include: _other_template"))  # fmt: skip
    write(tasks / "_other_template", "output_type: multiple_choice\ntest_split: test\n")
    (tasks / "data" / "me" / "other").mkdir(parents=True)
    write(pytester.path / "pytest.ini", "[pytest]\nevaltasks_changed_ignore = *.md\n")
    git(pytester.path, "init", "-q", "-b", "main")
    git(pytester.path, "config", "user.email", "t@example.com")
    git(pytester.path, "config", "user.name", "t")
    run(pytester, "--evaltasks", "quiz|0", "--snapshot-update").assert_outcomes(passed=1)
    git(pytester.path, "add", "-A")
    git(pytester.path, "commit", "-q", "-m", "base")
    for changed in (tasks / "_quiz_template", tasks / "utils.py", tasks / "data" / "me" /
                    "quiz" / "default" / "train.jsonl"):  # fmt: skip
        original = changed.read_text()
        changed.write_text(original + "\n")
        result = run(pytester, "--evaltasks", "quiz|0", "--evaltasks-changed=HEAD",
                     "--collect-only", "-q")  # fmt: skip
        result.stdout.fnmatch_lines(["evaltasks::quiz|0"])
        changed.write_text(original)
    (pytester.path / "notes.md").write_text("unrelated\n")  # declared irrelevant
    result = run(pytester, "--evaltasks", "quiz|0", "--evaltasks-changed=HEAD")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*0 tasks changed since HEAD: nothing to check*"])
    (pytester.path / "notes.txt").write_text("unrelated\n")  # claimed by no task
    result = run(pytester, "--evaltasks", "quiz|0", "--evaltasks-changed=HEAD")
    result.stdout.fnmatch_lines(["*1 task changed since HEAD: 1 changed file no task claims*"])


def test_show_prints_the_requests_and_touches_no_snapshot(pytester: pytest.Pytester) -> None:
    tasks = quiz_project(pytester.path)
    result = run(pytester, "--evaltasks", "quiz|1", "--evaltasks-show=1",
                 "--evaltasks-chat-template=chatml")  # fmt: skip
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "=== quiz|1: 1 of 4 docs (version 1.0)",
            "[doc 1 of 4] id=0",
            "--- context (chat template chatml) ---",
            "| <|im_start|>user",
        ]
    )
    assert not (tasks / "__snapshots__").exists()


def test_save_data_slices_a_dataset_into_the_data_root(pytester: pytest.Pytester) -> None:
    tasks = pytester.path / "tasks"
    rows = "".join(json.dumps({"q": f"q{i}", "answer": 0}) + "\n" for i in range(9))
    source = write(pytester.path / "raw" / "test.jsonl", rows)
    write(
        tasks / "local.yaml",
        f"""\
        task: local
        dataset_path: json
        dataset_kwargs:
          data_files:
            test: {source}
        output_type: multiple_choice
        test_split: test
        doc_to_text: "{{{{q}}}}"
        doc_to_target: "{{{{answer}}}}"
        doc_to_choice: ["a", "b"]
        """,
    )
    result = run(pytester, "--evaltasks", "local", "--evaltasks-save-data", "3")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    saved = tasks / "data" / "json" / "default" / "test.jsonl"
    assert len(saved.read_text().splitlines()) == 3
    assert json.loads((saved.parent / "MANIFEST").read_text())["split_sizes"] == {"test": 9}
    run(pytester, "--evaltasks", "local", "--snapshot-update").assert_outcomes(passed=1)
    (snapshot,) = (tasks / "__snapshots__").glob("local-0--*.txt")
    assert "docs: 3\n" in snapshot.read_text()  # the slice is what later runs read


LOCAL_JSON_TASK = """\
task: localjson
dataset_path: json
dataset_kwargs:
  data_files:
    test: {files}
output_type: multiple_choice
test_split: test
doc_to_text: "{{{{q}}}}"
doc_to_target: "{{{{answer}}}}"
doc_to_choice: ["a", "b"]
metadata:
  version: 1.0
"""


def _pytest_in(folder: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest in `folder`, in a fresh interpreter, with `cache` as the datasets cache."""
    env = {**os.environ, "HF_DATASETS_CACHE": str(cache), "HF_DATASETS_OFFLINE": "1",
           "HF_HUB_OFFLINE": "1"}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *QUIET, *args],
        cwd=folder, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("files", ["evaldata/test.jsonl", "evaldata/*.jsonl"])
def test_a_local_json_record_made_with_a_warm_cache_holds_in_a_cold_clone(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory, files: str
) -> None:
    """`dataset_kwargs.data_files` are the task's inputs whatever the datasets cache holds: a
    record made with a warm cache passes in a clone at another path with a cold one, and a
    changed row fails there."""
    root = pytester.path / "project"
    write(root / "pytest.ini", "[pytest]\n")
    write(root / "tasks" / "localjson.yaml", LOCAL_JSON_TASK.format(files=files))
    rows = [{"q": f"question {i}", "answer": i % 2} for i in range(4)]
    data = root / "evaldata" / "test.jsonl"
    write(data, "".join(json.dumps(row) + "\n" for row in rows))
    warm = tmp_path_factory.mktemp("warm-cache")
    _pytest_in(root, warm, "--evaltasks", "localjson")  # fills the cache (a new task: it fails)
    recorded = _pytest_in(root, warm, "--evaltasks", "localjson", "--snapshot-update")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    (snapshot,) = (root / "tasks" / "__snapshots__").glob("localjson-*.txt")
    assert "\nevaldata/test.jsonl\n" in snapshot.read_text(encoding="utf-8")
    clone = tmp_path_factory.mktemp("elsewhere") / "clone"
    shutil.copytree(root, clone, ignore=shutil.ignore_patterns("__pycache__"))
    fresh = _pytest_in(clone, tmp_path_factory.mktemp("cold-cache"), "--evaltasks", "localjson")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    rows[2]["q"] = "question 2, changed"
    write(clone / "evaldata" / "test.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    changed = _pytest_in(clone, tmp_path_factory.mktemp("another"), "--evaltasks", "localjson")
    assert changed.returncode == 1
    assert "1 of 4 docs changed (id 2)" in changed.stdout


@pytest.mark.parametrize("spec", ["quiz|0,quiz", "quiz,quiz|0"])
def test_a_bare_name_and_zero_shots_are_two_items(pytester: pytest.Pytester, spec: str) -> None:
    """For lm-eval a bare name means the YAML's own shot count: `quiz` and `quiz|0` are two
    requests that render differently, in either order."""
    tasks = quiz_project(pytester.path)
    yaml = tasks / "quiz.yaml"
    yaml.write_text(yaml.read_text().replace("metadata:", "num_fewshot: 2\nmetadata:"))
    result = run(pytester, "--evaltasks", spec, "--collect-only", "-q")
    assert sorted(line for line in result.outlines if line.startswith("evaltasks::")) == [
        "evaltasks::quiz|0",
        "evaltasks::quiz|2",
    ]


def test_the_export_names_the_shots_lm_eval_kept(pytester: pytest.Pytester) -> None:
    """A YAML that fixes `num_fewshot: 0` keeps it whatever is asked: the export says 0."""
    tasks = quiz_project(pytester.path)
    yaml = tasks / "quiz.yaml"
    yaml.write_text(yaml.read_text().replace("metadata:", "num_fewshot: 0\nmetadata:"))
    export = pytester.path / "prompts.jsonl"
    run(pytester, "--evaltasks", "quiz|3", "--snapshot-update", f"--evaltasks-export={export}")
    lines = [json.loads(line) for line in export.read_text().splitlines()]
    assert {line["num_fewshots"] for line in lines} == {0}
    assert {line["task"] for line in lines} == {"quiz|3"}


def test_a_hook_with_a_generator_of_its_own_records_and_checks_alike(
    pytester: pytest.Pytester,
) -> None:
    """gpqa n-shot's shape: the hook module keeps `random.Random(42)` and every `.map` draws on
    it. Each build imports it afresh and reads the data as lm-eval does on every run but the
    first: the two builds of a new record agree, the fresh process too, and a second record is
    the same bytes."""
    tasks = quiz_project(pytester.path)
    write(
        tasks / "utils.py",
        """\
        import random

        rng = random.Random(42)

        def process_docs(dataset):
            def shuffled(row):
                words = row["q"].split()
                rng.shuffle(words)
                return {"question": " ".join(words)}

            return dataset.map(shuffled)
        """,
    )
    for attempt in range(2):
        recorded = run(pytester, "--evaltasks", "quiz|2", "--snapshot-update", fresh=True)
        recorded.assert_outcomes(passed=1)
        (snapshot,) = (tasks / "__snapshots__").glob("quiz-2--*.txt")
        if attempt == 0:
            first = snapshot.read_bytes()
            snapshot.unlink()
    assert snapshot.read_bytes() == first
    run(pytester, "--evaltasks", "quiz|2", fresh=True).assert_outcomes(passed=1)


def test_a_missing_split_names_the_folder_and_the_file_to_add(pytester: pytest.Pytester) -> None:
    """lm-eval's own `KeyError: 'train'` deep in its task, said as the lighteval-style loader
    says it: the split, the folder, the splits there, the file to add."""
    tasks = quiz_project(pytester.path)
    data = tasks / "data" / "me" / "quiz" / "default"
    (data / "train.jsonl").unlink()
    result = run(pytester, "--evaltasks", "quiz|1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"*split 'train' not found in {data} (looked for train.jsonl, .json, .parquet or "
            f".csv); splits there: test. Add the file {data / 'train.jsonl'}, or fix the task's "
            f"split names (lm-eval: test_split, validation_split, training_split, fewshot_split*"
        ]
    )
    assert "KeyError" not in result.stdout.str()


LIGHTEVAL_QUIZ = """\
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics


def prompt(row, task_name):
    return Doc(query=f"Q: {row['q'].strip()}\\nA:{SPACE}", choices=[" yes", " no"],
               gold_index=row["answer"])


TASKS_TABLE = [LightevalTaskConfig(
    name="quiz_port", prompt_function=prompt, hf_repo="me/quiz", hf_subset="default",
    metrics=[Metrics.loglikelihood_acc], hf_avail_splits=["test", "train"],
    evaluation_splits=["test"], few_shots_split="train", few_shots_select="sequential",
    version=0,
)]
"""


def test_a_port_to_an_lm_eval_task_names_its_one_difference_and_gates_on_it(
    pytester: pytest.Pytester,
) -> None:
    """A lighteval-style copy of an lm-eval task, with a trailing space after `A:`: the port
    finds that delimiter (and lighteval's evaluation order), pairs docs by row or by a key
    column, and fails when the difference goes away until it is recorded."""
    tasks = quiz_project(pytester.path)
    write(tasks.parent / "other" / "quiz_port.py", LIGHTEVAL_QUIZ.replace("{SPACE}", " "))
    ports = '[[port]]\nname = "quiz"\na = { task = "quiz_port|0", dir = "other" }\nb = "quiz|0"\n'
    write(tasks / "ports.toml", ports)
    run(pytester, "--evaltasks", "ports", "--snapshot-update").assert_outcomes(passed=1)
    record = (tasks / "__snapshots__" / "ports" / "quiz.txt").read_text(encoding="utf-8")
    lines = record.split("[differences]\n", 1)[1].splitlines()
    found = dict(zip(lines[::2], lines[1::2], strict=True))
    kinds = {head.partition(":")[0]: head for head in found}
    assert set(kinds) == {"doc order", "delimiter or whitespace"}  # lighteval sorts its docs
    head = kinds["delimiter or whitespace"]
    assert head.startswith("delimiter or whitespace: 4 docs (test/0, test/1, test/2, test/3;")
    assert found[head] == '  e.g. test/2: a "st 2 odd?\\nA:[ ]"; b "st 2 odd?\\nA:[]"'
    assert "b: lm-eval; lm_eval" in record  # the harness's version, named if it changes

    write(tasks / "ports.toml", ports + 'key = "q"\n')  # a column both sides' rows hold
    result = run(pytester, "--evaltasks", "ports")
    result.assert_outcomes(failed=1)  # the same pairs, now named by their key
    result.stdout.fnmatch_lines(["*+delimiter or whitespace: 4 docs ( Is test 0 odd? ,*"])
    assert "coverage" not in result.stdout.str()

    write(tasks / "ports.toml", ports)
    write(tasks.parent / "other" / "quiz_port.py", LIGHTEVAL_QUIZ.replace("{SPACE}", ""))
    same = run(pytester, "--evaltasks", "ports")  # the space is gone: the order is left
    same.assert_outcomes(failed=1)
    same.stdout.fnmatch_lines(
        ["*what differs between the two sides changed*", "*-delimiter or whitespace: 4 docs*"]
    )
    assert "+delimiter" not in same.stdout.str() and "+doc order" not in same.stdout.str()
