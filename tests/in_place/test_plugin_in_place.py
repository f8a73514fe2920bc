"""The plugin end to end on lighteval-style task files, with lighteval installed.

lighteval's own folder in place; a project's custom task files that use lighteval's classes
(a config subclass, lighteval's `Doc`, duplicate names, a module that fails noisily); and the
save-data round trip from a local dataset folder that `datasets` reads as it reads a Hub repo.
"""

from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path

import pytest

lighteval = pytest.importorskip("lighteval")

REPO = Path(__file__).resolve().parents[2]
LIGHTEVAL_TASKS = Path(lighteval.__file__).parent / "tasks" / "tasks"
BUNDLED_DATA = REPO / "tasks" / "data"
QUIET = ("-p", "no:hypothesispytest", "-p", "no:anyio", "-p", "no:cacheprovider")


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest in a fresh interpreter, offline, in pytester's directory."""
    pytester._monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    pytester._monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    return pytester.runpytest_subprocess(*QUIET, *args)


IN_PLACE = (f"--evaltasks-dir={LIGHTEVAL_TASKS}", f"--evaltasks-data={BUNDLED_DATA}",
            "--evaltasks-snapshot-dir=snapshots")  # fmt: skip


def test_lighteval_tasks_in_place_record_then_pass(pytester: pytest.Pytester) -> None:
    spec = "arc:easy|5,gsm8k|5,mmlu:anatomy|5,hellaswag|0,piqa|0"
    first = run(pytester, "--evaltasks", spec, *IN_PLACE, "--snapshot-update")
    first.assert_outcomes(passed=5)
    assert len(list((pytester.path / "snapshots").iterdir())) == 5
    again = run(pytester, "--evaltasks", spec, *IN_PLACE, "-n", "2")
    again.assert_outcomes(passed=5)
    text = next((pytester.path / "snapshots").glob("arc-easy-5--*.txt")).read_text("utf-8")
    assert "metrics: loglikelihood_acc [acc; LOGPROBS]" in text
    assert "\n| Question:" in text


def test_lighteval_names_work_as_node_ids_and_with_k(pytester: pytest.Pytester) -> None:
    listing = run(pytester, "--evaltasks-list", "agieval", f"--evaltasks-dir={LIGHTEVAL_TASKS}")
    listing.stdout.fnmatch_lines(["*agieval:aqua-rat *version*"])
    collected = run(pytester, "--evaltasks", "agieval", *IN_PLACE, "--collect-only", "-q",
                    "-k", "aqua-rat")  # fmt: skip
    collected.stdout.fnmatch_lines(["evaltasks::agieval:aqua-rat|0"])


CUSTOM = '''\
import warnings
from dataclasses import dataclass

from lighteval.metrics.metrics import Metrics
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc


def prompt(line, task_name):
    return Doc(task_name=task_name, query=f"Q: {line['q']}\\nA:", choices=[" yes", " no"],
               gold_index=line["label"])


@dataclass
class MyTask(LightevalTaskConfig):
    """A lighteval config subclass with a field of its own."""

    owner: str = "me"

    def __init__(self, name, **kwargs):
        super().__init__(name=name, prompt_function=prompt, hf_repo="demo", hf_subset="main",
                         metrics=[Metrics.loglikelihood_acc], evaluation_splits=["test"],
                         few_shots_split=["train"], **kwargs)


print("loading custom tasks")
warnings.warn("a warning at import")
TASKS_TABLE = [MyTask("mine"), MyTask("twice"), MyTask("twice", version=1)]
'''


def write_project(pytester: pytest.Pytester) -> Path:
    """A project whose task files are written for lighteval."""
    tasks = pytester.path / "tasks"
    (tasks / "data" / "demo" / "main").mkdir(parents=True)
    for split, count in (("test", 4), ("train", 3)):
        rows = [{"q": f"{split} {i}", "label": i % 2} for i in range(count)]
        (tasks / "data" / "demo" / "main" / f"{split}.jsonl").write_text(
            "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
        )
    (tasks / "custom.py").write_text(CUSTOM, encoding="utf-8")
    (tasks / "noisy.py").write_text(
        'print("about to fail")\nimport warnings\nwarnings.warn("w")\n'
        'raise RuntimeError("network is unreachable")\n',
        encoding="utf-8",
    )
    return tasks


def test_custom_lighteval_files_subclass_doc_duplicates_and_a_failing_module(
    pytester: pytest.Pytester,
) -> None:
    write_project(pytester)
    ok = run(pytester, "--evaltasks", "mine|2", "--snapshot-update")
    ok.assert_outcomes(passed=1)
    output = ok.stdout.str() + ok.stderr.str()
    for quiet in ("loading custom tasks", "a warning at import"):
        assert quiet not in output  # a module that imports fine is quiet
    assert "tasks/noisy.py: RuntimeError: network is unreachable" in output  # named in the header
    text = (pytester.path / "tasks" / "__snapshots__").glob("mine-2--*.txt")
    snapshot = next(text).read_text(encoding="utf-8")
    assert "few_shots_split: train" in snapshot and "fewshot_ids: " in snapshot

    twice = run(pytester, "--evaltasks", "twice")
    assert twice.ret == pytest.ExitCode.USAGE_ERROR
    twice.stderr.fnmatch_lines(["*task 'twice' is defined twice in*custom.py*"])

    everything = run(pytester, "--evaltasks", "all")
    everything.assert_outcomes(passed=1, failed=2)
    failures = everything.stdout.str()
    assert "FAILED evaltasks::tasks/noisy.py" in failures
    assert "FAILED evaltasks::twice" in failures
    assert "network is unreachable" in failures and "about to fail" in failures


HUB_README = """\
---
configs:
- config_name: easy
  data_files:
  - split: train
    path: easy/train.jsonl
  - split: test
    path: easy/test.jsonl
  - split: validation
    path: easy/validation.jsonl
---
"""

HUB_TASK = """\
from lighteval.metrics.metrics import Metrics
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc


def prompt(line, task_name):
    return Doc(task_name=task_name, query=f"Question: {line['question']}\\nAnswer:",
               choices=[f" {c}" for c in line["choices"]], gold_index=line["answer"])


TASKS_TABLE = [LightevalTaskConfig(name="quiz", prompt_function=prompt, hf_repo="org/quiz",
               hf_subset="easy", metrics=[Metrics.loglikelihood_acc],
               hf_avail_splits=["train", "test"], evaluation_splits=["test"]),
               LightevalTaskConfig(name="quiz_dev", prompt_function=prompt, hf_repo="org/quiz",
               hf_subset="easy", metrics=[Metrics.loglikelihood_acc],
               hf_avail_splits=["validation"], evaluation_splits=["validation"])]
"""


def test_save_data_round_trip_from_a_hub_style_dataset_folder(pytester: pytest.Pytester) -> None:
    hub = pytester.path / "org" / "quiz"
    (hub / "easy").mkdir(parents=True)
    (hub / "README.md").write_text(HUB_README, encoding="utf-8")
    for split, count in (("train", 30), ("test", 80), ("validation", 10)):
        rows = [
            {"question": f"{split} question {i}?", "choices": ["a", "b", "c"], "answer": i % 3}
            for i in range(count)
        ]
        (hub / "easy" / f"{split}.jsonl").write_text(
            "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
        )
    (pytester.path / "tasks").mkdir()
    (pytester.path / "tasks" / "quiz.py").write_text(textwrap.dedent(HUB_TASK), encoding="utf-8")

    # Two tasks read different splits of one dataset: one slice holds them all.
    saved = run(pytester, "--evaltasks", "quiz|3,quiz_dev", "--evaltasks-save-data", "20")
    assert saved.ret == 0
    saved.stdout.fnmatch_lines(
        [
            "quiz|3: saved test 20 of 80, train 20 of 30, validation 10 of 10 rows to "
            "tasks/data/org/quiz/easy"
        ]
    )
    slice_dir = pytester.path / "tasks" / "data" / "org" / "quiz" / "easy"
    assert len((slice_dir / "test.jsonl").read_text().splitlines()) == 20
    manifest = json.loads((slice_dir / "MANIFEST").read_text())
    assert manifest["split_sizes"] == {"test": 80, "train": 30, "validation": 10}
    assert manifest["hf_repo"] == "org/quiz" and manifest["hf_subset"] == "easy"

    import shutil

    shutil.rmtree(pytester.path / "org")  # the "Hub" is gone: the slice is all there is
    update = run(pytester, "--evaltasks", "quiz|3,quiz_dev", "--snapshot-update")
    update.assert_outcomes(passed=2)
    run(pytester, "--evaltasks", "quiz|3,quiz_dev").assert_outcomes(passed=2)
    snapshot = next((pytester.path / "tasks" / "__snapshots__").glob("quiz-3--*.txt"))
    assert "docs: 20" in snapshot.read_text(encoding="utf-8")


def test_a_qa_template_task_passes_ci_runs_under_different_hash_seeds(
    pytester: pytest.Pytester,
) -> None:
    """lighteval's QA template builds choices with `list(set(answers))`, so squad_v2's prompts
    change from one process to the next: it is recorded and checked as built under
    PYTHONHASHSEED=0, and passes whatever the runner's hash seed."""
    import synthesize
    from lighteval.tasks.tasks import squad_v2

    (config,) = [c for c in squad_v2.TASKS_TABLE if c.name == "squad_v2"]
    synthesis = synthesize.synthesize(config, seed=3)
    assert synthesis.error is None, synthesis.error
    data = pytester.path / "qa-data"
    synthesize.write(synthesis, data, config)
    args = ("--evaltasks", "squad_v2|0", f"--evaltasks-dir={LIGHTEVAL_TASKS}",
            f"--evaltasks-data={data}", "--evaltasks-snapshot-dir=snapshots")  # fmt: skip
    pytester._monkeypatch.setenv("PYTHONHASHSEED", "1")
    run(pytester, *args, "--snapshot-update").assert_outcomes(passed=1)
    (snapshot,) = (pytester.path / "snapshots").iterdir()
    recorded = snapshot.read_bytes()
    assert b"hash_seed: 0" in recorded
    for seed in ("2", "3"):
        pytester._monkeypatch.setenv("PYTHONHASHSEED", seed)
        result = run(pytester, *args)
        result.assert_outcomes(passed=1)
        result.stdout.fnmatch_lines(["*hash-seed-dependent*"])
    assert snapshot.read_bytes() == recorded


TORCH_MODULE = """\
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics
{imports}

def prompt(row, task_name):
    return Doc(query=f"Q: {{row['q']}} ({{{count}}})\\nA:", choices=[" yes", " no"],
               gold_index=row["label"])


TASKS_TABLE = [
    LightevalTaskConfig(name=f"t{{i}}", prompt_function=prompt, hf_repo="demo", hf_subset="main",
                        metrics=[Metrics.exact_match], evaluation_splits=["test"])
    for i in range(6)
]
"""


@pytest.mark.parametrize("with_torch", [True, False], ids=["torch", "no torch"])
def test_a_task_module_that_imports_torch_is_never_forked(
    pytester: pytest.Pytester, with_torch: bool
) -> None:
    """`import torch` starts a thread of torch's own (and its first tensor op a pool of them),
    which a forked process would not have: the run refuses its look-ahead process and checks
    every item itself, with the results of the run alone. The same module without torch is
    forked (the verbose summary says so)."""
    if importlib.util.find_spec("torch") is None:  # not imported here: only the run needs it
        pytest.skip("torch is not installed")
    imports, count = ("import torch", "int(torch.ones(3).sum())") if with_torch else ("", "3")
    module = TORCH_MODULE.format(imports=imports, count=count)
    (pytester.path / "tasks").mkdir()
    (pytester.path / "tasks" / "torchy.py").write_text(module, encoding="utf-8")
    rows = pytester.path / "tasks" / "data" / "demo" / "main"
    rows.mkdir(parents=True)
    lines = [json.dumps({"q": f"question {i}", "label": i % 2}) for i in range(4)]
    (rows / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run(pytester, "--evaltasks=all", "--snapshot-update").assert_outcomes(passed=6)
    auto = run(pytester, "--evaltasks=all", "-v")
    auto.assert_outcomes(passed=6)
    assert ("look-ahead:" in auto.stdout.str()) is not with_torch
    off = run(pytester, "--evaltasks=all", "-v", "--evaltasks-lookahead=off")
    off.assert_outcomes(passed=6)
