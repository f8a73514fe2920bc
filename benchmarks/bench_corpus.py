"""Benchmark: `pytest --evaltasks all` over corpus-sized projects (up to 50,000 tasks).

For each size (tasks of 10 docs each, 625 per generated module), in a fresh folder:

* **update**: `--evaltasks all --snapshot-update` from nothing (every snapshot is new: each is
  also rebuilt in a fresh process before it is recorded), serial and `-n 2`;
* **compare**: `--evaltasks all` against the recorded snapshots, serial (with the look-ahead
  process, the default, and without it: `--evaltasks-lookahead=off`) and `-n 2`;
* **update, every snapshot kept**: `--snapshot-update` over the recorded snapshots, with the
  look-ahead process and without it, alternating;
* **docs' own cost**: a script that imports the modules and builds every task's docs with the
  engine, nothing else (no pytest, no snapshot), to subtract: what the plugin costs per task
  above the work the docs themselves need;
* **pytest's own cost**: a pytest session of as many trivial items (a collector of items named
  as ours, each passing at once), and **the task tables' own**: importing the task modules
  alone. pytest keeps every item and its reports until the session ends, and the task modules
  keep every config, so neither grows flat; what the plugin adds per task above the two is the
  figure that must stay flat.

Printed per size: wall time, CPU time (user + system, workers included) and peak memory (the
largest process: a worker under `-n 2`) of each command, the `-n 2` / serial ratio (compare
runs alternate, serial then `-n 2`, `--runs` pairs), the cost per task above the docs' own,
and the snapshot folder's files and bytes; then the peaks by size, and the memory per task
between the smallest and the largest size: the compare run's, pytest's own, the tables', and
what the plugin adds above pytest's and the tables'. On a machine shared with
other work, CPU time is the steadier figure of a command's own cost.

Usage: `python benchmarks/bench_corpus.py [--sizes 2000,10000,50000] [--runs 1] [--keep DIR]`
(bytecode caching on; the largest size takes minutes per command).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_registry import BARE_IMPORT, MODULE
from processes import Pair, Run, interleaved, timed_run

PER_MODULE = 625
DOCS = 10

DOCS_ONLY = """\
import sys
from pytest_evaltasks import Registry
registry = Registry([sys.argv[1]], data_dir=sys.argv[2])
total = 0
for request in registry.resolve("all"):
    total += len(registry.make_task(request).build().docs)
print(total)
"""

PYTEST_ALONE = """\
import os

import pytest


class Trivial(pytest.Item):
    def runtest(self):
        pass

    def reportinfo(self):
        return self.path, 0, self.name


class Trivials(pytest.Collector):
    def collect(self):
        per_module, count = int(os.environ["PER_MODULE"]), int(os.environ["ITEMS"])
        return [
            Trivial.from_parent(self, name=f"family{i // per_module:03d}:{i % per_module}|0")
            for i in range(count)
        ]


def pytest_collect_file(file_path, parent):
    if file_path.name == "conftest.py":
        return Trivials.from_parent(parent, path=file_path, name="evaltasks")
"""
"""pytest's own cost for as many items as a run has tasks: a conftest that collects that many
trivial items, named as the plugin names them."""


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
        text = MODULE.format(family=f"family{number:03d}", count=count, data="rows")
        (folder / f"family{number:03d}.py").write_text(text, encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (root / "docs_only.py").write_text(DOCS_ONLY, encoding="utf-8")
    (root / "tables_only.py").write_text(BARE_IMPORT, encoding="utf-8")
    alone = root / "pytest-alone"
    alone.mkdir(exist_ok=True)
    (alone / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (alone / "conftest.py").write_text(PYTEST_ALONE, encoding="utf-8")
    return folder


def pytest_alone(root: Path, tasks: int, runs: int) -> list[Run]:
    """`runs` pytest sessions of `tasks` trivial items (see `PYTEST_ALONE`)."""
    env = {**os.environ, "ITEMS": str(tasks), "PER_MODULE": str(PER_MODULE)}
    return timed(bare_pytest("conftest.py"), root / "pytest-alone", runs, env)


def per_task(figures: list[tuple[int, float]]) -> float:
    """KB per task between the smallest and the largest size (figures: size, MB)."""
    (small, low), (large, high) = figures[0], figures[-1]
    return (high - low) * 1024 / (large - small)


def bare_pytest(*args: str) -> list[str]:
    """A pytest command in this interpreter (the plugins unrelated to ours left out)."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
            "-p", "no:hypothesispytest", "-p", "no:anyio", *args]  # fmt: skip


def pytest(*args: str) -> list[str]:
    """`pytest --evaltasks all` in this interpreter, as `bare_pytest`."""
    return bare_pytest("--evaltasks", "all", *args)


def timed(command: list[str], cwd: Path, runs: int, env: dict[str, str] | None = None) -> list[Run]:
    """`runs` runs of a command; a failing one stops the benchmark."""
    done = [timed_run(command, cwd, env) for _ in range(runs)]
    check(done, command, cwd)
    return done


def check(done: list[Run], command: list[str], cwd: Path) -> None:
    failed = [run.code for run in done if run.code != 0]
    if failed:
        raise SystemExit(f"{' '.join(command)} failed in {cwd} (exit {failed})")


def wall(runs: list[Run]) -> float:
    return statistics.median(run.wall for run in runs)


def cpu(runs: list[Run]) -> float:
    return statistics.median(run.cpu for run in runs)


def peak(runs: list[Run]) -> float:
    return max(run.peak_mb for run in runs)


def folder_size(folder: Path) -> tuple[int, int]:
    """Files and bytes in a folder."""
    files = [path for path in folder.iterdir() if path.is_file()]
    return len(files), sum(path.stat().st_size for path in files)


def line(title: str, runs: list[Run], note: str = "") -> str:
    return (f"  {title:<24}{wall(runs):8.2f} s wall {cpu(runs):8.2f} s cpu  "
            f"peak {peak(runs):5.0f} MB{note}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,10000,50000")
    parser.add_argument("--runs", type=int, default=1, help="compare pairs (serial, -n 2) per size")
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args(argv)
    base = args.keep or Path(tempfile.mkdtemp(prefix="evaltasks-corpus-"))
    print(f"{sys.executable}; tasks of {DOCS} docs, {PER_MODULE} per module; folder {base}")
    peaks: list[tuple[int, float, float]] = []
    own: list[tuple[int, float]] = []
    """pytest's own peak for as many trivial items, by size."""
    tables: list[tuple[int, float]] = []
    """Importing the task modules alone, by size."""
    for size in (int(part) for part in args.sizes.split(",")):
        root = base / f"tasks-{size}"
        tasks = write_project(root, size)
        data = tasks / "data"
        snapshots = tasks / "__snapshots__"
        docs_only = timed([sys.executable, str(root / "docs_only.py"), str(tasks), str(data)],
                          root, args.runs)  # fmt: skip
        tables_only = timed([sys.executable, str(root / "tables_only.py"), str(tasks)], root,
                            args.runs)  # fmt: skip
        trivial = pytest_alone(root, size, args.runs)
        own.append((size, peak(trivial)))
        tables.append((size, peak(tables_only)))
        if snapshots.is_dir():
            for path in snapshots.iterdir():
                path.unlink()
        update = timed(pytest("--snapshot-update"), root, 1)
        files, size_bytes = folder_size(snapshots)
        # serial and -n 2 in turn, so both see the same machine load
        compare: list[Run] = []
        compare_n2: list[Run] = []
        compare_alone: list[Run] = []
        alone = pytest("--evaltasks-lookahead=off")
        for _ in range(args.runs):
            compare.append(timed_run(pytest(), root))
            compare_n2.append(timed_run(pytest("-n", "2"), root))
            compare_alone.append(timed_run(alone, root))
        check(compare, pytest(), root)
        check(compare_n2, pytest("-n", "2"), root)
        check(compare_alone, alone, root)
        ratio = Pair(compare_n2, compare).ratio
        ahead = Pair(compare, compare_alone).ratio
        kept = interleaved(
            pytest("--snapshot-update"),
            pytest("--snapshot-update", "--evaltasks-lookahead=off"),
            root,
            args.runs,
            warmup=0,
        )
        check(kept.a + kept.b, pytest("--snapshot-update"), root)
        for path in snapshots.iterdir():
            path.unlink()
        update_n2 = timed(pytest("--snapshot-update", "-n", "2"), root, 1)
        above_wall = (wall(compare) - wall(docs_only)) / size * 1000
        above_cpu = (cpu(compare) - cpu(docs_only)) / size * 1000
        peaks.append((size, peak(compare), peak(compare_n2)))
        print(f"\n{size} tasks ({size * DOCS} docs), {-(-size // PER_MODULE)} modules")
        print(line("docs alone (no pytest):", docs_only))
        print(line("task tables alone:", tables_only, "  (importing the task modules)"))
        print(line("pytest alone:", trivial, f"  ({size} trivial items)"))
        print(line("compare, serial:", compare, f"  (/ look-ahead off: {ahead:.2f}x)"))
        print(line("compare, look-ahead off:", compare_alone))
        pairs = f"  (-n 2 / serial wall, median of {args.runs} pairs: {ratio:.2f}x)"
        print(line("compare, -n 2:", compare_n2, pairs))
        print(line("update, all kept:", kept.a, f"  (/ look-ahead off: {kept.ratio:.2f}x)"))
        print(line("update, kept, alone:", kept.b))
        print(line("update, serial:", update))
        print(line("update, -n 2:", update_n2, f"  (-n 2 / serial wall: "
                   f"{update_n2[0].wall / update[0].wall:.2f}x)"))  # fmt: skip
        print(f"  per task above the docs' own cost (compare, serial): {above_wall:.2f} ms wall, "
              f"{above_cpu:.2f} ms cpu (target: at most 2 ms)")  # fmt: skip
        print(f"  snapshot folder: {files} files, {size_bytes / 1e6:.1f} MB")
    if len(peaks) > 1:
        print("\npeak memory by size (flat as tasks are added):")
        for size, serial_peak, n2_peak in peaks:
            print(f"  {size:>7} tasks: serial {serial_peak:5.0f} MB, -n 2 {n2_peak:5.0f} MB "
                  f"(largest process)")  # fmt: skip
        ours = per_task([(size, serial) for size, serial, _ in peaks])
        pytest_own, table_own = per_task(own), per_task(tables)
        above = ours - pytest_own - table_own
        print(
            f"per task, {peaks[0][0]} to {peaks[-1][0]} tasks: compare run {ours:.2f} KB, "
            f"pytest's own for a trivial item {pytest_own:.2f} KB, the task tables' "
            f"{table_own:.2f} KB; the plugin's above both {above:.2f} KB"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
