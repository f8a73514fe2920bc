"""Benchmark: `pytest --evaltasks all` over corpus-sized projects (up to 50,000 tasks).

For each size (tasks of 10 docs each, 625 per generated module), in a fresh folder:

* **update**: `--evaltasks all --snapshot-update` from nothing (every snapshot is new: each is
  also rebuilt in a fresh process before it is recorded), serial and `-n 2`;
* **compare**: `--evaltasks all` against the recorded snapshots, serial and `-n 2`;
* **docs' own cost**: a script that imports the modules and builds every task's docs with the
  engine, nothing else (no pytest, no snapshot), to subtract: what the plugin costs per task
  above the work the docs themselves need.

Printed per size: wall time and peak memory (the largest process: a worker under `-n 2`) of
each command, the cost per task above the docs' own, and the snapshot folder's files and bytes.
Peak memory must stay flat as tasks are added; `-n 2` should beat serial at the large sizes.

Usage: `python benchmarks/bench_corpus.py [--sizes 2000,10000,50000] [--runs 1] [--keep DIR]`
(bytecode caching on; the largest size takes minutes per command).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import Run, timed_run

PER_MODULE = 625
DOCS = 10

MODULE = '''\
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics


def prompt(line, task_name):
    return Doc(task_name=task_name, query=f"Q: {{line['q']}}\\nA:", choices=[" yes", " no"],
               gold_index=line["label"])


TASKS_TABLE = [
    LightevalTaskConfig(name=f"{family}:{{i}}", prompt_function=prompt, hf_repo="bench/rows",
                        hf_subset="default", metrics=[Metrics.loglikelihood_acc],
                        evaluation_splits=["test"], few_shots_split="train")
    for i in range({count})
]
'''

DOCS_ONLY = """\
import sys
from pytest_evaltasks import Registry
registry = Registry([sys.argv[1]], data_dir=sys.argv[2])
total = 0
for request in registry.resolve("all"):
    total += len(registry.make_task(request).build().docs)
print(total)
"""


def write_project(root: Path, tasks: int) -> Path:
    """`tasks` tasks of `DOCS` docs each, `PER_MODULE` per module, over one small dataset."""
    folder = root / "tasks"
    data = folder / "data" / "bench" / "rows" / "default"
    data.mkdir(parents=True, exist_ok=True)
    for split, count in (("test", DOCS), ("train", 4)):
        lines = [json.dumps({"q": f"{split} {i}", "label": i % 2}) for i in range(count)]
        (data / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    modules, rest = divmod(tasks, PER_MODULE)
    counts = [PER_MODULE] * modules + ([rest] if rest else [])
    for number, count in enumerate(counts):
        text = MODULE.format(family=f"family{number:03d}", count=count)
        (folder / f"family{number:03d}.py").write_text(text, encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (root / "docs_only.py").write_text(DOCS_ONLY, encoding="utf-8")
    return folder


def pytest(*args: str) -> list[str]:
    """A pytest command in this interpreter (the plugins unrelated to ours left out)."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
            "-p", "no:hypothesispytest", "-p", "no:anyio", "--evaltasks", "all", *args]  # fmt: skip


def timed(command: list[str], cwd: Path, runs: int) -> list[Run]:
    """`runs` runs of a command; a failing one stops the benchmark."""
    done = [timed_run(command, cwd) for _ in range(runs)]
    failed = [run.code for run in done if run.code != 0]
    if failed:
        raise SystemExit(f"{' '.join(command)} failed in {cwd} (exit {failed})")
    return done


def wall(runs: list[Run]) -> float:
    return statistics.median(run.wall for run in runs)


def peak(runs: list[Run]) -> float:
    return max(run.peak_mb for run in runs)


def folder_size(folder: Path) -> tuple[int, int]:
    """Files and bytes in a folder."""
    files = [path for path in folder.iterdir() if path.is_file()]
    return len(files), sum(path.stat().st_size for path in files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,10000,50000")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args(argv)
    base = args.keep or Path(tempfile.mkdtemp(prefix="evaltasks-corpus-"))
    print(f"{sys.executable}; tasks of {DOCS} docs, {PER_MODULE} per module; folder {base}")
    for size in (int(part) for part in args.sizes.split(",")):
        root = base / f"tasks-{size}"
        tasks = write_project(root, size)
        data = tasks / "data"
        docs_only = timed([sys.executable, str(root / "docs_only.py"), str(tasks), str(data)],
                          root, args.runs)  # fmt: skip
        update = timed(pytest("--snapshot-update"), root, 1)
        files, size_bytes = folder_size(tasks / "__snapshots__")
        compare = timed(pytest(), root, args.runs)
        compare_n2 = timed(pytest("-n", "2"), root, args.runs)
        for path in (tasks / "__snapshots__").iterdir():
            path.unlink()
        update_n2 = timed(pytest("--snapshot-update", "-n", "2"), root, 1)
        above = (wall(compare) - wall(docs_only)) / size * 1000
        print(f"\n{size} tasks ({size * DOCS} docs), {-(-size // PER_MODULE)} modules")
        rows = [
            ("docs alone (engine, no pytest):", docs_only, ""),
            ("compare, serial:", compare, ""),
            ("compare, -n 2:", compare_n2,
             f"  ({wall(compare) / wall(compare_n2):.2f}x serial's speed)"),
            ("update, serial:", update, ""),
            ("update, -n 2:", update_n2, f"  ({wall(update) / wall(update_n2):.2f}x)"),
        ]
        for title, measured, note in rows:
            print(f"  {title:<32}{wall(measured):8.2f} s  peak {peak(measured):5.0f} MB{note}")
        print(f"  per task above the docs' own cost (compare, serial): {above:.2f} ms "
              f"(target: at most 2 ms)")
        print(f"  snapshot folder: {files} files, {size_bytes / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
