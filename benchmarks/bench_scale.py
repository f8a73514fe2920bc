"""Benchmark: one task of many rows (200k and 1M by default), through the whole command.

Writes a multiple-choice task module and N synthetic rows of JSON Lines, records the snapshot
(`--snapshot-update`), then times the compare run in a fresh process (the sizes in turn, three
rounds), reporting wall and CPU time per doc (linear in rows when it stays flat) and peak
memory per doc above a trivial pytest session's peak (the interpreter's baseline).

Usage: `python benchmarks/bench_scale.py [--rows 200000 1000000] [--keep DIR]`
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import Run, timed_run

TASK = """\
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

LETTERS = "ABCD"


def prompt(line, task_name):
    options = "".join(f"{letter}. {text}\\n" for letter, text in zip(LETTERS, line["choices"]))
    return Doc(task_name=task_name, query=f"Question: {line['question']}\\n{options}Answer:",
               choices=[f" {letter}" for letter in LETTERS], gold_index=line["answer"])


TASKS_TABLE = [LightevalTaskConfig(name="scale", prompt_function=prompt, hf_repo="bench/scale",
               hf_subset="default", metrics=[Metrics.loglikelihood_acc],
               evaluation_splits=["test"], few_shots_split="dev", version=0)]
"""

WORDS = "the of a to in which is that for with as by on an be this are from at or it".split()  # noqa: SIM905


def write_project(root: Path, rows: int, seed: int = 7) -> None:
    """The task module and `rows` test rows (plus 5 dev rows)."""
    tasks = root / "tasks"
    data = tasks / "data" / "bench" / "scale" / "default"
    data.mkdir(parents=True, exist_ok=True)
    (tasks / "scale.py").write_text(TASK, encoding="utf-8")
    rng = random.Random(seed)
    for split, count in (("test", rows), ("dev", 5)):
        with (data / f"{split}.jsonl").open("w", encoding="utf-8") as stream:
            for index in range(count):
                row = {
                    "question": " ".join(rng.choices(WORDS, k=12)) + f" {index}?",
                    "choices": [" ".join(rng.choices(WORDS, k=3)) for _ in range(4)],
                    "answer": rng.randrange(4),
                }
                stream.write(json.dumps(row) + "\n")


def command(*extra: str) -> list[str]:
    """The compare run of the scale task."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--evaltasks",
            "scale", "--evaltasks-lint=off", *extra]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Record, then time the compare run, for each row count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[200_000, 1_000_000])
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args(argv)
    base = args.keep or Path(tempfile.mkdtemp(prefix="evaltasks-scale-"))
    trivial_dir = base / "trivial"
    trivial_dir.mkdir(parents=True, exist_ok=True)
    (trivial_dir / "test_trivial.py").write_text("def test_nothing():\n    pass\n", "utf-8")
    baseline = timed_run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_trivial.py"],
        trivial_dir,
    ).peak_mb
    print(f"baseline: a trivial pytest session peaks at {baseline:.0f} MB")
    recorded: dict[int, Run] = {}
    for rows in args.rows:
        root = base / f"rows-{rows}"
        write_project(root, rows)
        recorded[rows] = timed_run(command("--snapshot-update"), root)
        if recorded[rows].code != 0:
            raise SystemExit(f"{rows} rows: recording failed (exit {recorded[rows].code})")
    # the sizes' compare runs in turn, so all see the same machine load
    runs: dict[int, list[Run]] = {rows: [] for rows in args.rows}
    for _ in range(3):
        for rows in args.rows:
            runs[rows].append(timed_run(command(), base / f"rows-{rows}"))
    per_doc: list[tuple[float, float]] = []
    for rows in args.rows:
        if any(run.code != 0 for run in runs[rows]):
            raise SystemExit(f"{rows} rows: the compare run failed")
        best = min(run.wall for run in runs[rows])
        best_cpu = min(run.cpu for run in runs[rows])
        peak = max(run.peak_mb for run in runs[rows])
        per_doc_kb = (peak - baseline) * 1024 / rows
        per_doc.append((best / rows, best_cpu / rows))
        print(
            f"{rows:>9,} rows: compare best of 3 {best:6.2f} s wall, {best_cpu:6.2f} s cpu "
            f"({best_cpu / rows * 1e6:.1f} us/doc cpu), peak {peak:.0f} MB = {per_doc_kb:.2f} "
            f"KB/doc above the baseline (record {recorded[rows].wall:.1f} s, peak "
            f"{recorded[rows].peak_mb:.0f} MB)"
        )
    if len(per_doc) > 1:
        wall_ratio = per_doc[-1][0] / per_doc[0][0]
        cpu_ratio = per_doc[-1][1] / per_doc[0][1]
        print(f"time per doc, largest vs smallest: {wall_ratio:.2f}x wall, {cpu_ratio:.2f}x cpu "
              f"(1.00x is linear)")  # fmt: skip
    print("targets: linear time, peak <= 1 KB/doc above the baseline")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
