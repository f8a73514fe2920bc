"""Benchmark: is a changed-only run still worth having, now that it is fail-safe?

A git project of 2,000 tasks (20 modules of 100, each task over a data folder of its own) is
recorded and committed; a pull request then changes one file, and the changed-only step CI runs
(`--evaltasks all --evaltasks-changed=main --evaltasks-base=main`) is timed against the full run
(`--evaltasks all --evaltasks-base=main`), with the number of items each ran:

* one task's data file edited: the changed-only run checks that task alone;
* a README and a docs page edited, declared irrelevant in `evaltasks_changed_ignore`: it
  checks nothing;
* a file no task claims and no pattern declares (`notes.txt`): it checks every task, as it
  must, at the cost of the full run plus the selection's.

Each timing is the median of `--runs` fresh processes, the two commands interleaved.

Usage: `python benchmarks/bench_selection.py [--runs 3] [--keep DIR]`
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import interleaved

MODULES, PER_MODULE = 20, 100

MODULE = """\
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics


def prompt(line, task_name):
    return Doc(task_name=task_name, query=f"Q: {{line['q']}}\\nA:", choices=[" yes", " no"],
               gold_index=line["label"])


TASKS_TABLE = [
    LightevalTaskConfig(name=f"family{module:02d}:{{i}}", prompt_function=prompt, hf_repo="bench",
                        hf_subset=f"t{module:02d}_{{i:03d}}", metrics=[Metrics.loglikelihood_acc],
                        evaluation_splits=["test"], few_shots_split="train")
    for i in range({count})
]
"""

INI = """\
[pytest]
evaltasks_changed_ignore =
    *.md
    docs/
"""


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=bench@example.org", "-c", "user.name=bench", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def write_project(root: Path) -> None:
    """The project, recorded and committed on `main`, with a branch checked out."""
    tasks = root / "tasks"
    for module in range(MODULES):
        (tasks / f"family{module:02d}.py").parent.mkdir(parents=True, exist_ok=True)
        text = MODULE.format(module=module, count=PER_MODULE)
        (tasks / f"family{module:02d}.py").write_text(text, encoding="utf-8")
        for i in range(PER_MODULE):
            data = tasks / "data" / "bench" / f"t{module:02d}_{i:03d}"
            data.mkdir(parents=True)
            for split, count in (("test", 4), ("train", 2)):
                rows = [json.dumps({"q": f"{split} {module} {i} {n}", "label": n % 2})
                        for n in range(count)]  # fmt: skip
                (data / f"{split}.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (root / "pytest.ini").write_text(INI, encoding="utf-8")
    (root / "README.md").write_text("# bench\n", encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("a guide\n", encoding="utf-8")
    (root / ".gitignore").write_text(".pytest_cache/\n__pycache__/\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    recorded = subprocess.run(pytest("--evaltasks", "all", "--snapshot-update", "-n", "2"),
                              cwd=root, capture_output=True, text=True)  # fmt: skip
    if recorded.returncode != 0:
        raise SystemExit(f"recording failed:\n{recorded.stdout[-2000:]}")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "recorded")
    git(root, "checkout", "-q", "-b", "change")


def pytest(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *args]


CHANGED = ("--evaltasks", "all", "--evaltasks-changed=main", "--evaltasks-base=main")
FULL = ("--evaltasks", "all", "--evaltasks-base=main")


def items_run(root: Path, *args: str) -> int:
    """How many items a run collects."""
    done = subprocess.run(pytest(*args, "--collect-only"), cwd=root, capture_output=True,
                          text=True)  # fmt: skip
    found = re.search(r"(\d+) tests? collected", done.stdout)
    if found is None and "no tests collected" not in done.stdout:
        raise SystemExit(f"could not count the items:\n{done.stdout[-2000:]}")
    return int(found.group(1)) if found else 0


def measure(root: Path, label: str, runs: int) -> None:
    """The changed-only step against the full run, for the change in the working tree."""
    selected, full = items_run(root, *CHANGED), items_run(root, *FULL)
    pair = interleaved(pytest(*CHANGED), pytest(*FULL), root, runs)
    codes = {run.code for run in pair.a} | {run.code for run in pair.b}
    print(f"{label}: changed-only runs {selected} of {full} items")
    print("  " + pair.line("changed-only", "full run") + f" (exit codes {sorted(codes)})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args(argv)
    root = (args.keep or Path(tempfile.mkdtemp(prefix="evaltasks-selection-"))) / "project"
    write_project(root)

    data = root / "tasks" / "data" / "bench" / "t07_042" / "test.jsonl"
    data.write_text(data.read_text(encoding="utf-8").replace("test 7 42 0", "TEST"), "utf-8")
    measure(root, "one task's data file edited", args.runs)
    git(root, "checkout", "-q", "--", ".")

    (root / "README.md").write_text("# bench, edited\n", encoding="utf-8")
    (root / "docs" / "guide.md").write_text("a guide, edited\n", encoding="utf-8")
    measure(root, "README.md and docs/guide.md edited (declared irrelevant)", args.runs)
    git(root, "checkout", "-q", "--", ".")

    (root / "notes.txt").write_text("claimed by no task\n", encoding="utf-8")
    measure(root, "notes.txt added (claimed by no task, not declared)", args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
