"""Benchmark: the whole command `pytest --evaltasks "mmlu|5"` over full-size MMLU-shaped data.

57 items, 14,042 docs rendered and fingerprinted, snapshots compared (written once
beforehand). Each timed run is a fresh `python -m pytest` process; wall time is measured
around it and peak memory is the child's max RSS (from `wait4`).

The split between startup, data loading, rendering and the snapshot step is measured
in-process with the same code the items run, one phase at a time.

Usage: `python benchmarks/bench_command.py [--runs N] [--keep DIR]`

Run it with bytecode caching on (unset PYTHONDONTWRITEBYTECODE): without cached `.pyc` files
every import recompiles, and pytest's assertion rewriting of plugin modules dominates.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import REPO, TASKS_DIR, write_data

SPEC = "mmlu|5"
# Plugins of test-only or transitive dependencies (hypothesis; anyio via httpx) that pytest
# auto-loads; a user's environment may not have them, so figures are given both ways.
NO_FOREIGN_PLUGINS = ("-p", "no:hypothesispytest", "-p", "no:anyio")


def pytest_command(data_dir: Path, snapshot_dir: Path, *extra: str) -> list[str]:
    """The user's command, pointed at the benchmark data and snapshots."""
    return [
        sys.executable, "-m", "pytest", "--evaltasks", SPEC,
        "--evaltasks-dir", str(TASKS_DIR), "--evaltasks-data", str(data_dir),
        "--evaltasks-snapshot-dir", str(snapshot_dir), "-p", "no:cacheprovider", "-q", *extra,
    ]  # fmt: skip


def timed_run(command: list[str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB, and exit code of one child process."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def phases(data_dir: Path, snapshot_dir: Path) -> dict[str, float]:
    """Seconds per pipeline phase, in this process, with the code the items run."""
    from pytest_evaltasks.engine.registry import Registry
    from pytest_evaltasks.snapshot.format import RunSettings, build_snapshot
    from pytest_evaltasks.snapshot.gate import judge
    from pytest_evaltasks.snapshot.storage import read_recorded, snapshot_filename

    t0 = time.perf_counter()
    registry = Registry([TASKS_DIR], data_dir=data_dir)
    requests = registry.resolve(SPEC)
    tasks = [registry.make_task(request) for request in requests]
    t1 = time.perf_counter()
    for task in tasks:
        task.eval_docs()
    t2 = time.perf_counter()
    built = [build_snapshot(task, task.build(), RunSettings()) for task in tasks]
    t3 = time.perf_counter()
    for request, snapshot in zip(requests, built, strict=True):
        recorded = read_recorded(snapshot_dir / snapshot_filename(request.label))
        assert recorded is not None
        assert judge(recorded.facts, snapshot.facts, update=False).passes
    t4 = time.perf_counter()
    return {"registry": t1 - t0, "data loading": t2 - t1, "render + hash": t3 - t2,
            "snapshot compare": t4 - t3}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Write data, record snapshots once, then time the compare command."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="write data and snapshots here and keep them")
    args = parser.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="evaltasks-bench-"))
    data_dir, snapshot_dir = root / "data", root / "snapshots"
    rows, size = write_data(data_dir)
    print(f"data: {rows} test rows, {size / 1e6:.1f} MB of JSONL under {data_dir}")
    _, _, code = timed_run(pytest_command(data_dir, snapshot_dir, "--snapshot-update"))
    if code != 0:
        raise SystemExit(f"writing snapshots failed (exit {code})")
    rows_out = []
    variants = {
        "pytest --evaltasks mmlu|5": (),
        "  without hypothesis' and anyio's plugins": NO_FOREIGN_PLUGINS,
        "  startup only (--collect-only)": ("--collect-only",),
        "  startup only, without those plugins": ("--collect-only", *NO_FOREIGN_PLUGINS),
    }
    for label, extra in variants.items():
        results = [
            timed_run(pytest_command(data_dir, snapshot_dir, *extra)) for _ in range(args.runs)
        ]
        if any(code != 0 for *_, code in results):
            raise SystemExit(f"{label}: a run failed")
        walls = [wall for wall, _, _ in results]
        rows_out.append(
            (label, statistics.median(walls), min(walls), max(m for _, m, _ in results))
        )
    print(f"\n{'command':<42} {'median s':>9} {'min s':>7} {'peak MB':>8}   ({args.runs} runs)")
    for label, med, low, peak in rows_out:
        print(f"{label:<42} {med:>9.3f} {low:>7.3f} {peak:>8.1f}")
    print("\nphases in-process (one run):")
    for name, seconds in phases(data_dir, snapshot_dir).items():
        print(f"  {name:<18} {seconds:6.3f} s")
    print("\ntargets: median <= 1.0 s, peak <= 120 MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
