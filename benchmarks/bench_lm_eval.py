"""Benchmark: lm-eval tasks through the plugin against lm-eval's own loading of the same tasks.

Three runs, each side by side with lm-eval 0.4.13 loading the same tasks itself (its
`TaskManager`, which indexes every YAML file of its folder and of an include path, then
`get_task_dict` and `build_all_requests` for every task, at the same shot count, reading the
same local rows through `datasets`):

* one task: `pytest --evaltasks "arc_easy|5" --evaltasks-dir=lm_eval:tasks`;
* the mmlu group: `pytest --evaltasks "mmlu|5"` (57 tasks);
* `all` over a custom folder of 50 YAML tasks (`--evaltasks-dir=custom`; lm-eval's side is
  `TaskManager(include_path=custom)` and every task of that folder).

Our side is timed twice: as a first run (no pytest cache: the index records of the YAML files a
run needs are parsed and kept) and as a later run (the kept records verified against the
files). Each is a compare run against snapshots recorded once beforehand. Rows are synthetic,
written under a temporary data root; nothing reaches the network. Commands are timed in turn
(ours first, ours later, lm-eval), `--runs` rounds after one untimed round.

Usage: `python benchmarks/bench_lm_eval.py [--runs 3] [--keep DIR]` (with lm-eval installed:
`pip install -e ".[test,lm-eval]"`)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import Run, timed_run

LM_EVAL_SIDE = """\
import json, sys
from pathlib import Path

import datasets

data, names = Path(sys.argv[1]), json.loads(sys.argv[2])
shots, include = int(sys.argv[3]), sys.argv[4]
real = datasets.load_dataset


def load(path=None, name=None, **kwargs):
    folder = data / str(path) / (name or "default")
    if folder.is_dir():
        return real("json", data_files={p.stem: str(p) for p in sorted(folder.glob("*.jsonl"))})
    return real(path=path, name=name, **kwargs)


datasets.load_dataset = load
from lm_eval.api.task import Task
from lm_eval.tasks import TaskManager, get_task_dict

manager = TaskManager(include_path=include or None)
if names == "all":  # every task of the include path, as `all` over that folder
    index = manager.task_index
    names = [n for n in manager.all_subtasks if str(index[n].yaml_path).startswith(include)]


def leaves(tasks):
    for value in tasks.values():
        if isinstance(value, Task):
            yield value
        elif isinstance(value, dict):
            yield from leaves(value)


count = 0
for task in leaves(get_task_dict(names, manager)):
    if task.get_config("num_fewshot") != 0:
        task.set_config(key="num_fewshot", value=shots)
    task.set_fewshot_seed(seed=1234)
    task.build_all_requests(rank=0, world_size=1)
    count += len(task.instances)
print(count)
"""

TEMPLATE = """\
output_type: multiple_choice
test_split: test
training_split: train
process_docs: !function utils.process_docs
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_choice: "{{choices}}"
doc_to_target: label
metric_list:
  - metric: acc
metadata:
  version: 1.0
"""

UTILS = """\
def process_docs(dataset):
    return dataset.map(lambda row: {"question": row["question"].strip()})
"""


def mmlu_rows(data: Path, lm_eval_tasks: Path, test_rows: int) -> None:
    """Synthetic rows for every mmlu subject (`cais/mmlu/<subject>/{test,dev}.jsonl`)."""
    rnd = random.Random(0)
    for path in sorted((lm_eval_tasks / "mmlu" / "default").glob("mmlu_*.yaml")):
        text = path.read_text(encoding="utf-8")
        subject = next(
            line.split(":", 1)[1].strip().strip("'\"")
            for line in text.splitlines()
            if line.strip("'\"").startswith("dataset_name")
        )
        for split, count in (("test", test_rows), ("dev", 5)):
            rows = [
                {
                    "question": f"{subject} {split} question {i}: {rnd.random():.6f}?",
                    "subject": subject,
                    "choices": [f"option {k}" for k in range(4)],
                    "answer": i % 4,
                }
                for i in range(count)
            ]
            write_jsonl(data / "cais" / "mmlu" / subject / f"{split}.jsonl", rows)


def arc_rows(data: Path, test_rows: int) -> None:
    """Synthetic rows for arc_easy (`allenai/ai2_arc/ARC-Easy`)."""
    for split, count in (("test", test_rows), ("train", 20), ("validation", 5)):
        rows = [
            {
                "id": f"{split}-{i}",
                "question": f"Which {split} thing {i} is red?",
                "choices": {"text": [f"thing {k}" for k in range(4)], "label": list("ABCD")},
                "answerKey": "ABCD"[i % 4],
            }
            for i in range(count)
        ]
        write_jsonl(data / "allenai" / "ai2_arc" / "ARC-Easy" / f"{split}.jsonl", rows)


def custom_folder(root: Path, data: Path, tasks: int, test_rows: int) -> Path:
    """`tasks` YAML tasks over ten datasets, with an include and a hook module."""
    folder = root / "custom"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "_template_yaml").write_text(TEMPLATE, encoding="utf-8")
    (folder / "utils.py").write_text(UTILS, encoding="utf-8")
    for number in range(tasks):
        dataset = f"bench/custom{number % 10}"
        text = f"include: _template_yaml\ntask: custom_{number:02d}\ndataset_path: {dataset}\n"
        (folder / f"custom_{number:02d}.yaml").write_text(text, encoding="utf-8")
    for number in range(10):
        for split, count in (("test", test_rows), ("train", 8)):
            rows = [
                {"question": f" {number} {split} {i} ", "choices": ["y", "n"], "label": i % 2}
                for i in range(count)
            ]
            write_jsonl(data / "bench" / f"custom{number}" / "default" / f"{split}.jsonl", rows)
    return folder


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def pytest(*args: str) -> list[str]:
    """A pytest command in this interpreter (unrelated plugins off)."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:hypothesispytest",
            "-p", "no:anyio", *args]  # fmt: skip


def first_run(command: list[str], root: Path) -> list[str]:
    """`command` without pytest's cache (the index records): a project's first run."""
    cache = root / ".pytest_cache"
    return ["sh", "-c", f'rm -rf "{cache}" && exec "$@"', "first-run", *command]


def median(runs: list[Run]) -> float:
    return statistics.median(run.wall for run in runs)


def compare(title: str, ours: list[str], theirs: list[str], root: Path, runs: int) -> None:
    """Ours (first run, later run) and lm-eval's loading, timed in turn."""
    record = timed_run([*ours, "--snapshot-update"], root)
    if record.code != 0:
        raise SystemExit(f"{title}: recording the snapshots failed (exit {record.code})")
    commands = {"first run": first_run(ours, root), "later run": ours, "lm-eval": theirs}
    found: dict[str, list[Run]] = {name: [] for name in commands}
    for round_number in range(runs + 1):
        for name, command in commands.items():
            run = timed_run(command, root)
            if run.code != 0:
                raise SystemExit(f"{title}: {name} failed (exit {run.code}): {command}")
            if round_number:
                found[name].append(run)
    lm_eval = median(found["lm-eval"])
    print(f"\n{title}")
    for name, measured in found.items():
        ratio = "" if name == "lm-eval" else f"  ({median(measured) / lm_eval:.2f}x lm-eval's)"
        cpu = statistics.median(run.cpu for run in measured)
        fastest = min(run.wall for run in measured)
        peak = max(run.peak_mb for run in measured)
        print(f"  {name:<10} median {median(measured):6.2f} s  (min {fastest:6.2f})  cpu "
              f"{cpu:6.2f} s  peak {peak:4.0f} MB{ratio}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--test-rows", type=int, default=40, help="test rows per dataset")
    parser.add_argument(
        "--only", choices=["one", "mmlu", "custom"], action="append", help="run only these parts"
    )
    args = parser.parse_args(argv)
    try:
        import lm_eval
    except ImportError:
        raise SystemExit("lm-eval is not installed: pip install -e '.[test,lm-eval]'") from None
    lm_eval_tasks = Path(lm_eval.__file__).parent / "tasks"
    base = args.keep or Path(tempfile.mkdtemp(prefix="evaltasks-lm-eval-"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    print(f"lm-eval {lm_eval.__version__}; load average {os.getloadavg()[0]:.2f}; in {base}")
    script = base / "lm_eval_side.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(LM_EVAL_SIDE, encoding="utf-8")

    def theirs(data: Path, names: object, shots: int, include: str = "") -> list[str]:
        return [sys.executable, str(script), str(data), json.dumps(names), str(shots), include]

    parts = set(args.only or ["one", "mmlu", "custom"])
    if "one" in parts:
        one = base / "one"
        arc_rows(one / "tasks" / "data", args.test_rows)
        compare(
            "one task: arc_easy|5",
            pytest("--evaltasks", "arc_easy|5", "--evaltasks-dir=lm_eval:tasks"),
            theirs(one / "tasks" / "data", ["arc_easy"], 5),
            one,
            args.runs,
        )
    if "mmlu" in parts:
        group = base / "mmlu"
        mmlu_rows(group / "tasks" / "data", lm_eval_tasks, args.test_rows)
        compare(
            "the mmlu group: mmlu|5 (57 tasks)",
            pytest("--evaltasks", "mmlu|5", "--evaltasks-dir=lm_eval:tasks"),
            theirs(group / "tasks" / "data", ["mmlu"], 5),
            group,
            args.runs,
        )
    if "custom" in parts:
        custom = base / "custom"
        data = custom / "custom" / "data"
        folder = custom_folder(custom, data, 50, args.test_rows)
        compare(
            "all over a custom folder of 50 YAML tasks (0 shots)",
            pytest("--evaltasks", "all", "--evaltasks-dir=custom"),
            theirs(data, "all", 0, str(folder)),
            custom,
            args.runs,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
