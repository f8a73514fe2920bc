"""Benchmark: one lighteval task in place, against lighteval's own import of the module defining it.

With lighteval 0.13 installed (`pip install -e ".[test,lighteval]"`), in a temporary project
holding synthetic `mmlu:anatomy` rows (`tasks/data/lighteval/mmlu/anatomy/{test,dev}.jsonl`, the
Hub's columns) and its recorded snapshot, these whole processes are timed in turn, `--runs`
rounds after one untimed round:

* floor: `python -c "import lighteval.tasks.tasks.mmlu"`, the one module that defines the task
  (its imports pull in lighteval's metrics, torch and inspect_ai: most of any in-place run);
* first run: `pytest --evaltasks "mmlu:anatomy|5"` over lighteval's two installed folders
  (`evaltasks_dir = lighteval:tasks lighteval:multilingual`, about 52,000 tasks) with an empty
  pytest cache, so the verified module index is made (every module of both is imported);
* later run: the same command with the index kept (verified against every module file, then
  only the modules that can define the name are imported, and those lighteval's folder cannot
  import at all, which have no record);
* `--evaltasks-list=mmlu`, a later run;
* lighteval's own: `python -c` importing every module of both folders, as its registry does (what
  a run costs without the index).

pytest may exit 1 in these runs: three of lighteval 0.13's modules fail to import offline, and are
reported as broken.

Usage: `python benchmarks/bench_in_place.py [--runs 3]`
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import Run, timed_run

TASK = "mmlu:anatomy|5"

IMPORT_ALL = """\
import importlib.util, pathlib, sys
import lighteval.tasks.multilingual.tasks as multilingual
import lighteval.tasks.tasks as tasks
folders = [pathlib.Path(f.__path__[0]) for f in (tasks, multilingual)]
paths = [path for folder in folders for path in sorted(folder.rglob("*.py"))]
for index, path in enumerate(paths):
    if path.name.startswith("_"):
        continue
    spec = importlib.util.spec_from_file_location(f"bench_module_{index}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception:
        pass
"""


def write_project(root: Path) -> None:
    """Synthetic anatomy rows with the Hub's columns, and the snapshot recorded once."""
    rnd = random.Random(0)
    data = root / "tasks" / "data" / "lighteval" / "mmlu" / "anatomy"
    data.mkdir(parents=True)
    for split, count in (("test", 135), ("dev", 5)):
        rows = [
            {
                "question": f"Anatomy {split} question {i}: {rnd.random():.6f}?",
                "subject": "anatomy",
                "choices": [f"option {k}" for k in range(4)],
                "answer": i % 4,
            }
            for i in range(count)
        ]
        text = "".join(json.dumps(row) + "\n" for row in rows)
        (data / f"{split}.jsonl").write_text(text, encoding="utf-8")
    (root / "pytest.ini").write_text(
        "[pytest]\nevaltasks_dir = lighteval:tasks lighteval:multilingual\n", encoding="utf-8"
    )


def pytest_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *args]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    try:
        import lighteval  # noqa: F401
    except ImportError:
        print("lighteval is not installed: pip install -e '.[test,lighteval]'", file=sys.stderr)
        return 2
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_project(root)
        recorded = timed_run(pytest_command("--evaltasks", TASK, "--snapshot-update"), root, env)
        if recorded.code != 0:
            print("recording the snapshot failed", file=sys.stderr)
            return 1
        commands = {
            "floor: import lighteval's mmlu module": [
                sys.executable, "-c", "import lighteval.tasks.tasks.mmlu",
            ],
            "first run (index made)": pytest_command(
                "--evaltasks", TASK, "-o", "cache_dir=.first-cache"
            ),
            "later run (index kept)": pytest_command("--evaltasks", TASK),
            "--evaltasks-list=mmlu (later)": pytest_command("--evaltasks-list=mmlu"),
            "lighteval: import every module": [sys.executable, "-c", IMPORT_ALL],
        }  # fmt: skip
        runs: dict[str, list[Run]] = {label: [] for label in commands}
        for round_ in range(options.runs + 1):
            for label, command in commands.items():
                shutil.rmtree(root / ".first-cache", ignore_errors=True)
                run = timed_run(command, root, env)
                if run.code not in (0, 1):  # 1: lighteval's folder has modules that fail
                    print(f"{label}: exit code {run.code}", file=sys.stderr)
                    return 1
                if round_:
                    runs[label].append(run)
    floor = runs["floor: import lighteval's mmlu module"]
    print(f"{options.runs} rounds, commands in turn; load average {os.getloadavg()[0]:.1f}")
    for label, timed in runs.items():
        wall = statistics.median(r.wall for r in timed)
        cpu = statistics.median(r.cpu for r in timed)
        ratio = statistics.median(r.wall / f.wall for r, f in zip(timed, floor, strict=True))
        cpu_ratio = statistics.median(r.cpu / f.cpu for r, f in zip(timed, floor, strict=True))
        print(
            f"{label:40} median {wall:6.2f} s wall, {cpu:6.2f} s cpu, "
            f"peak {max(r.peak_mb for r in timed):5.0f} MB | / floor {ratio:.2f}x wall, "
            f"{cpu_ratio:.2f}x cpu"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
