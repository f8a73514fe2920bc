"""Benchmark: the time and peak memory of a 60-task lm-eval run, every process counted.

A custom folder of 60 lm-eval YAML tasks (each its own file, over a dataset of its own, with
an include and a `process_docs` hook) is recorded from nothing (`--snapshot-update`: every task
new, so each is also built in a fresh process, as on another machine, before it is recorded)
and then checked (a compare run). While each runs, the memory of the whole process tree
(pytest and every fresh build process) is sampled every 50 ms: the figures are its peak sum,
and the most processes alive at once.

Usage: `python benchmarks/bench_lm_eval_memory.py [--tasks 60] [--keep DIR]` (with lm-eval
installed: `pip install -e ".[test,lm-eval]"`)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

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


def write_project(root: Path, tasks: int) -> None:
    """`tasks` YAML tasks in `root/tasks`, each over its own rows in the data root."""
    folder = root / "tasks"
    folder.mkdir(parents=True)
    (folder / "_template_yaml").write_text(TEMPLATE, encoding="utf-8")
    (folder / "utils.py").write_text(UTILS, encoding="utf-8")
    for number in range(tasks):
        text = f"include: _template_yaml\ntask: bench_{number:02d}\ndataset_path: bench/t{number}\n"
        (folder / f"bench_{number:02d}.yaml").write_text(text, encoding="utf-8")
        for split, count in (("test", 20), ("train", 8)):
            rows = [{"question": f" {number} {split} {i} ", "choices": ["y", "n"], "label": i % 2}
                    for i in range(count)]  # fmt: skip
            path = folder / "data" / "bench" / f"t{number}" / "default" / f"{split}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")


def tree_rss(pid: int) -> tuple[int, int]:
    """The resident memory (bytes) of `pid` and every process below it, and how many."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                rss[int(entry)] = int(line.split()[1]) * 1024
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, up in parents.items() if up == parent and child not in tree]
        tree.update(children)
        frontier += children
    return sum(rss.get(member, 0) for member in tree), len(tree)


def measured(command: list[str], root: Path) -> tuple[float, float, int, int]:
    """Wall seconds, peak memory of the process tree (MB), most processes alive, exit code."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    peak, most, done = 0, 0, threading.Event()

    def sample() -> None:
        nonlocal peak, most
        while not done.is_set():
            total, count = tree_rss(process.pid)
            peak, most = max(peak, total), max(most, count)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    code = process.wait()
    done.set()
    sampler.join()
    return time.perf_counter() - start, peak / 2**20, most, code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=60)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args(argv)
    root = (args.keep or Path(tempfile.mkdtemp(prefix="evaltasks-lm-eval-memory-"))) / "project"
    write_project(root, args.tasks)
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "--evaltasks", "all"]
    for label, command in (
        ("record from nothing (--snapshot-update)", [*pytest, "--snapshot-update"]),
        ("compare run", pytest),
    ):
        wall, peak, most, code = measured(command, root)
        print(f"{args.tasks} lm-eval tasks, {label}: {wall:.1f} s, peak {peak:.0f} MB over the "
              f"process tree, at most {most} processes alive (exit {code})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
