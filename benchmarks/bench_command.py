"""Benchmark: the whole `pytest --evaltasks "mmlu|5"` command against a bare pytest start.

57 items, 14,042 docs rendered, fingerprinted and linted, snapshots compared (recorded once
beforehand), over full-size MMLU-shaped synthetic data. The same interpreter also runs a
trivial one-test pytest session; the two alternate over `--runs` pairs and the figure is the
median of the pair-by-pair ratios. Also measured, in the same way:

* the command against itself without its look-ahead process (`--evaltasks-lookahead=off`);
* the plugin's cost when `--evaltasks` is not given: the trivial run against itself with
  `-p no:evaltasks` (the plugin blocked);
* the in-process phases, with the code the items run (registry, docs, hashing, lint, compare),
  best of 5.

Usage: `python benchmarks/bench_command.py [--runs 7] [--keep DIR]`. Run it with the
interpreter of the environment to measure (one holding only `pip install -e .` is what the
targets speak of), with bytecode caching on.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import TASKS_DIR, write_data
from processes import interleaved, median, timed_run

SPEC = "mmlu|5"


def pytest_command(data_dir: Path, snapshot_dir: Path, *extra: str) -> list[str]:
    """The user's command, pointed at the benchmark data and snapshots."""
    return [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--evaltasks",
        SPEC,
        "--evaltasks-dir",
        str(TASKS_DIR),
        "--evaltasks-data",
        str(data_dir),
        "--evaltasks-snapshot-dir",
        str(snapshot_dir),
        *extra,
    ]  # fmt: skip  (the space-separated form users type: it must not move the root)


def trivial_command(folder: Path, *extra: str) -> list[str]:
    """A pytest session of one test that does nothing."""
    test = folder / "test_trivial.py"
    test.write_text("def test_nothing():\n    pass\n", encoding="utf-8")
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test), *extra]


def phases(data_dir: Path, snapshot_dir: Path, repeats: int = 5) -> dict[str, float]:
    """Best-of-`repeats` seconds per phase, in this process, with the code the items run."""
    import warnings

    from pytest_evaltasks.engine.registry import Registry
    from pytest_evaltasks.engine.rendered import DocsRendered
    from pytest_evaltasks.engine.run_settings import RunSettings
    from pytest_evaltasks.lint.rules import lint
    from pytest_evaltasks.snapshot.built import build_snapshot
    from pytest_evaltasks.snapshot.gate import judge
    from pytest_evaltasks.snapshot.parse import recorded_shown_text
    from pytest_evaltasks.snapshot.storage import read_recorded, snapshot_filename

    warnings.simplefilter("ignore")
    best: dict[str, float] = {}
    for _ in range(repeats):
        t0 = time.perf_counter()
        registry = Registry([TASKS_DIR], data_dir=data_dir)
        requests = registry.resolve(SPEC)
        t1 = time.perf_counter()
        tasks = [registry.make_task(request) for request in requests]
        results = [task.build() for task in tasks]
        t2 = time.perf_counter()
        built = [
            build_snapshot(DocsRendered.of(t, r), RunSettings(), root=TASKS_DIR.parent)
            for t, r in zip(tasks, results, strict=True)
        ]
        t3 = time.perf_counter()
        for snapshot in built:
            lint(snapshot.rendered)
        t4 = time.perf_counter()
        for request, snapshot in zip(requests, built, strict=True):
            recorded = read_recorded(snapshot_dir / snapshot_filename(request.label))
            assert recorded is not None
            assert judge(recorded.facts, snapshot.facts, update=False).passes
            shown = recorded.facts.docs_shown
            assert recorded_shown_text(recorded.text) == snapshot.shown_text(shown)
        t5 = time.perf_counter()
        spans = {"registry (task modules)": t1 - t0, "docs (rows, prompts, few-shot)": t2 - t1,
                 "fingerprint": t3 - t2, "lint": t4 - t3, "compare": t5 - t4}  # fmt: skip
        for name, seconds in spans.items():
            best[name] = min(best.get(name, seconds), seconds)
    return best


def main(argv: list[str] | None = None) -> int:
    """Write data, record snapshots once, then time the compare command against pytest."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="write data and snapshots here and keep them")
    args = parser.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="evaltasks-bench-"))
    data_dir, snapshot_dir = root / "data", root / "snapshots"
    rows, size = write_data(data_dir)
    print(f"data: {rows} test rows, {size / 1e6:.1f} MB of JSON Lines under {data_dir}")
    record = timed_run(pytest_command(data_dir, snapshot_dir, "--snapshot-update"), root)
    if record.code != 0:
        raise SystemExit(f"recording the snapshots failed (exit {record.code})")
    command = pytest_command(data_dir, snapshot_dir)
    trivial = trivial_command(root)
    whole = interleaved(command, trivial, root, args.runs)
    print(f"\n{args.runs} pairs, interleaved, {sys.executable}")
    print(whole.line(f"pytest --evaltasks {SPEC!r}", "trivial pytest"))
    alone = pytest_command(data_dir, snapshot_dir, "--evaltasks-lookahead=off")
    ahead = interleaved(command, alone, root, args.runs)
    print(ahead.line("with its look-ahead process", "the run alone (--evaltasks-lookahead=off)"))
    blocked = interleaved(trivial, trivial_command(root, "-p", "no:evaltasks"), root, args.runs)
    added = (blocked.ratio - 1) * median(blocked.b)
    print(blocked.line("trivial, plugin installed", "trivial, -p no:evaltasks"))
    print(f"plugin cost without --evaltasks: {added * 1000:+.0f} ms (ratio {blocked.ratio:.3f})")
    print("\nphases in-process (best of 5):")
    for name, seconds in phases(data_dir, snapshot_dir).items():
        print(f"  {name:<32} {seconds:6.3f} s")
    print(f"\ntargets: ratio <= 1.9x (got {whole.ratio:.2f}x), peak <= 120 MB "
          f"(got {max(r.peak_mb for r in whole.a):.0f} MB), plugin <= 20 ms "
          f"(got {added * 1000:.0f} ms)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
