"""Benchmark: build and render every `mmlu|5` prompt (57 tasks, 14,042 docs) in-process.

Writes full-size, MMLU-shaped synthetic rows (the real per-subject test counts, 5 dev rows per
subject, the Hub's columns) to a temporary data root, then measures, each run in a fresh Python
process:

* engine: `Registry(task_dirs=[<repo>/tasks], data_dir=...).load("mmlu|5")`, then for every task
  `get_docs()` and `render_plain(doc)` for every doc (the bundled `tasks/mmlu.py` prompt function);
* bare loop: the same rows read with `json` and the same prompt strings built by a hand-written
  loop with no engine at all -- the floor the engine is compared against.

Both produce byte-identical prompts; a separate, untimed run checks that by digest.

Usage: `python benchmarks/bench_engine.py [--runs N] [--keep DIR] [--profile]`
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TASKS_DIR = REPO / "tasks"
SPEC = "mmlu|5"

# Test rows per subject in the real MMLU release (hendrycks/test data.tar = lighteval/mmlu):
# 14,042 in total. Order is lighteval's subject order, as in tasks/mmlu.py.
TEST_ROWS: dict[str, int] = {
    "abstract_algebra": 100, "anatomy": 135, "astronomy": 152, "business_ethics": 100,
    "clinical_knowledge": 265, "college_biology": 144, "college_chemistry": 100,
    "college_computer_science": 100, "college_mathematics": 100, "college_medicine": 173,
    "college_physics": 102, "computer_security": 100, "conceptual_physics": 235,
    "econometrics": 114, "electrical_engineering": 145, "elementary_mathematics": 378,
    "formal_logic": 126, "global_facts": 100, "high_school_biology": 310,
    "high_school_chemistry": 203, "high_school_computer_science": 100,
    "high_school_european_history": 165, "high_school_geography": 198,
    "high_school_government_and_politics": 193, "high_school_macroeconomics": 390,
    "high_school_mathematics": 270, "high_school_microeconomics": 238,
    "high_school_physics": 151, "high_school_psychology": 545, "high_school_statistics": 216,
    "high_school_us_history": 204, "high_school_world_history": 237, "human_aging": 223,
    "human_sexuality": 131, "international_law": 121, "jurisprudence": 108,
    "logical_fallacies": 163, "machine_learning": 112, "management": 103, "marketing": 234,
    "medical_genetics": 100, "miscellaneous": 783, "moral_disputes": 346,
    "moral_scenarios": 895, "nutrition": 306, "philosophy": 311, "prehistory": 324,
    "professional_accounting": 282, "professional_law": 1534, "professional_medicine": 272,
    "professional_psychology": 612, "public_relations": 110, "security_studies": 245,
    "sociology": 201, "us_foreign_policy": 100, "virology": 166, "world_religions": 171,
}  # fmt: skip
DEV_ROWS = 5
TOTAL_TEST_ROWS = 14_042

# Subjects whose real questions carry a long passage (reading-style items).
LONG_SUBJECTS = {
    "professional_law": 160,
    "high_school_european_history": 220,
    "high_school_us_history": 200,
    "high_school_world_history": 200,
    "professional_medicine": 110,
    "professional_accounting": 70,
    "moral_scenarios": 45,
    "security_studies": 90,
}
DEFAULT_QUESTION_WORDS = 22

WORDS = (  # noqa: SIM905 (a word list reads better as prose)
    "the of a to in which is that for with as by on an be this are from at or it was not "
    "following statement most likely correct true false best describes would if when under "
    "court plaintiff defendant contract patient cell energy market price theory law state "
    "function value equation force reaction model evidence claim policy government group "
    "naïve café Thévenin µm ≥ — résumé façade Gödel Schrödinger 10% $250 1/2 x^2 (i) (ii)"
).split()


def mmlu_subjects() -> tuple[str, ...]:
    """The subject list of the bundled task file, so the data always matches the tasks."""
    sys.path.insert(0, str(REPO))
    try:
        from tasks.mmlu import SUBJECTS  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    return tuple(SUBJECTS)


# -- data --------------------------------------------------------------------------------------


def write_data(data_dir: Path, seed: int = 1234) -> tuple[int, int]:
    """Write `lighteval/mmlu/<subject>/{test,dev}.jsonl`; returns (test rows, bytes written)."""
    subjects = mmlu_subjects()
    if set(subjects) != set(TEST_ROWS):
        raise SystemExit("tasks/mmlu.py subjects differ from the benchmark's count table")
    rng = random.Random(seed)
    rows_total = bytes_total = 0
    for subject in subjects:
        directory = data_dir / "lighteval" / "mmlu" / subject
        directory.mkdir(parents=True, exist_ok=True)
        words = LONG_SUBJECTS.get(subject, DEFAULT_QUESTION_WORDS)
        for split, count in (("test", TEST_ROWS[subject]), ("dev", DEV_ROWS)):
            lines = [
                json.dumps(_row(rng, subject, words), ensure_ascii=False) for _ in range(count)
            ]
            text = "\n".join(lines) + "\n"
            (directory / f"{split}.jsonl").write_text(text, encoding="utf-8")
            bytes_total += len(text.encode("utf-8"))
            if split == "test":
                rows_total += count
    return rows_total, bytes_total


def _row(rng: random.Random, subject: str, mean_words: int) -> dict[str, Any]:
    """One synthetic row with the Hub's columns and realistic, varied text lengths."""
    n_words = max(4, int(rng.gauss(mean_words, mean_words / 3)))
    question = " ".join(rng.choices(WORDS, k=n_words)).capitalize() + "?"
    choices = [" ".join(rng.choices(WORDS, k=rng.randint(1, 9))) for _ in range(4)]
    return {
        "question": question,
        "subject": subject,
        "choices": choices,
        "answer": rng.randrange(4),
    }


# -- workers (each runs in a fresh interpreter) ------------------------------------------------


def _rss_bytes() -> int:
    """Current resident set size, from /proc (Linux)."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _max_rss_bytes() -> int:
    """Peak resident set size of this process so far (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def worker_engine(data_dir: Path, trace: bool, digest: bool) -> dict[str, Any]:
    """Time Registry -> load -> get_docs -> render_plain over every mmlu|5 doc."""
    import warnings

    from pytest_evaltasks import Registry, render_plain

    warnings.simplefilter("ignore")
    hasher = hashlib.sha256() if digest else None
    rss_before = _rss_bytes()
    if trace:
        import tracemalloc

        tracemalloc.start()
    t0, cpu0 = time.perf_counter(), time.process_time()
    tasks = Registry(task_dirs=[str(TASKS_DIR)], data_dir=str(data_dir)).load(SPEC)
    t1 = time.perf_counter()
    docs_s = render_s = 0.0
    count = chars = 0
    for task in tasks:
        a = time.perf_counter()
        docs = task.get_docs()
        b = time.perf_counter()
        prompts = [render_plain(doc) for doc in docs]
        c = time.perf_counter()
        docs_s += b - a
        render_s += c - b
        count += len(prompts)
        chars += sum(map(len, prompts))
        if hasher is not None:
            for prompt in prompts:
                hasher.update(prompt.encode())
    result = _measured(t0, cpu0, count, chars, rss_before, trace, hasher)
    result["phases"] = {"registry+load": t1 - t0, "get_docs": docs_s, "render_plain": render_s}
    return result


def worker_bare(data_dir: Path, trace: bool, digest: bool) -> dict[str, Any]:
    """The same prompts from a hand-written loop: json rows, f-strings, no engine."""
    hasher = hashlib.sha256() if digest else None
    rss_before = _rss_bytes()
    if trace:
        import tracemalloc

        tracemalloc.start()
    t0, cpu0 = time.perf_counter(), time.process_time()
    count = chars = 0
    for subject in mmlu_subjects_from_disk(data_dir):
        directory = data_dir / "lighteval" / "mmlu" / subject
        prompts = bare_subject_prompts(directory)
        count += len(prompts)
        chars += sum(map(len, prompts))
        if hasher is not None:
            for prompt in prompts:
                hasher.update(prompt.encode())
    return _measured(t0, cpu0, count, chars, rss_before, trace, hasher)


def _measured(
    t0: float, cpu0: float, count: int, chars: int, rss_before: int, trace: bool, hasher: Any
) -> dict[str, Any]:
    """A worker's figures, taken the moment its work ends (shared by both workers)."""
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    result: dict[str, Any] = {
        "wall": wall,
        "cpu": cpu,
        "docs": count,
        "chars": chars,
        "rss_delta": _max_rss_bytes() - rss_before,
    }
    if trace:
        import tracemalloc

        result["traced_peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    if hasher is not None:
        result["digest"] = hasher.hexdigest()
    return result


def mmlu_subjects_from_disk(data_dir: Path) -> list[str]:
    """Subjects in the order `Registry.load("mmlu|5")` yields them: sorted task names."""
    return sorted(p.name for p in (data_dir / "lighteval" / "mmlu").iterdir())


def bare_subject_prompts(directory: Path) -> list[str]:
    """One subject's 5-shot prompts in evaluation order, without the engine.

    The order (shuffle with `random.Random(42)`) and the few-shot examples (balanced
    selection over the 5 dev rows, which with 6 wanted takes every row) follow
    docs/differences-from-lighteval.md (prompt steps 4-5).
    """
    letters = "ABCD"

    def read(split: str) -> list[dict[str, Any]]:
        with open(directory / f"{split}.jsonl", encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]

    def question(row: dict[str, Any]) -> str:
        options = "".join(f"\n{letters[i]}. {text}" for i, text in enumerate(row["choices"]))
        return "Question: " + row["question"] + options + "\nAnswer:"

    test, dev = read("test"), read("dev")
    header = (
        "The following are multiple choice questions (with answers) about "
        f"{test[0]['subject'].replace('_', ' ')}.\n\n"
    )
    shots = [(question(row), letters[row["answer"]]) for row in _balanced_dev(dev)]
    prefix = header + "\n\n" + "".join(f"{q} {a}\n\n" for q, a in shots)
    items = [(question(row), row["answer"]) for row in test]
    random.Random(42).shuffle(items)
    prompts = []
    for query, answer in items:
        if any(q == query and a == letters[answer] for q, a in shots):  # leak: drop that shot
            kept = [f"{q} {a}\n\n" for q, a in shots if not (q == query and a == letters[answer])]
            prompts.append(header + "\n\n" + "".join(kept[:5]) + query)
        else:
            prompts.append(prefix + query)
    return prompts


def _balanced_dev(dev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """lighteval's balanced order over the dev rows, labelled by their gold choice text."""
    r = random.Random(0)
    buckets: dict[str, list[dict[str, Any]]] = {}
    for row in dev:
        buckets.setdefault(row["choices"][row["answer"]], []).append(row)
    by_size: dict[int, list[str]] = {}
    for label in sorted(buckets):
        by_size.setdefault(len(buckets[label]), []).append(label)
    order: list[str] = []
    for size in sorted(by_size, reverse=True):
        r.shuffle(by_size[size])
        order.extend(by_size[size])
    chosen: list[dict[str, Any]] = []
    position = 0
    while len(chosen) < min(len(dev), DEV_ROWS + 1):
        bucket = buckets[order[position % len(order)]]
        position += 1
        if bucket:
            chosen.append(bucket.pop(r.randrange(len(bucket))))
    return chosen


IMPORT_PROBE = """
import sys, time
started = time.perf_counter()
{statement}
elapsed = time.perf_counter() - started
heavy = ("pydantic", "jinja2", "datasets", "pyarrow", "pandas", "numpy", "pytest", "syrupy")
print(elapsed, *[name for name in heavy if name in sys.modules])
"""


def probe_import(statement: str) -> tuple[float, list[str]]:
    """Time `statement` in a clean interpreter (`python -c`); also list heavy modules it loaded."""
    code = IMPORT_PROBE.format(statement=statement)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/"
    )
    elapsed, *loaded = done.stdout.split()
    return float(elapsed), loaded


# -- driver ------------------------------------------------------------------------------------


def run_worker(kind: str, data_dir: Path, *flags: str) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter and return its JSON result."""
    command = [sys.executable, __file__, "--worker", kind, "--data", str(data_dir), *flags]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"worker {kind} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def median(values: Iterator[float] | list[float]) -> float:
    """Median of measurements."""
    return statistics.median(list(values))


def main(argv: list[str] | None = None) -> int:
    """Parse flags, write the data, run the workers, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per side (default 5)")
    parser.add_argument("--keep", type=Path, help="write the data here and keep it")
    parser.add_argument(
        "--profile", action="store_true", help="also print a cProfile of one engine run"
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--digest", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        return _worker_main(args)
    if args.keep is not None:
        return _bench(args.keep / "data", args.runs, args.profile)
    with tempfile.TemporaryDirectory(prefix="bench_engine_") as tmp:
        return _bench(Path(tmp) / "data", args.runs, args.profile)


def _worker_main(args: argparse.Namespace) -> int:
    """Entry point of a measurement subprocess: one JSON line on stdout."""
    if args.worker == "engine":
        result = worker_engine(args.data, args.trace, args.digest)
    elif args.worker == "bare":
        result = worker_bare(args.data, args.trace, args.digest)
    elif args.worker == "profile":
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        worker_engine(args.data, trace=False, digest=False)
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(25)
        result = {}
    else:
        raise SystemExit(f"unknown worker {args.worker!r}")
    print(json.dumps(result))
    return 0


def _bench(data_dir: Path, runs: int, profile: bool) -> int:
    """Write data, measure both sides, print the table; exit status 1 when a target is missed."""
    rows, size = write_data(data_dir)
    assert rows == TOTAL_TEST_ROWS, rows
    load_before = os.getloadavg()[0]
    engine: list[dict[str, Any]] = []
    bare: list[dict[str, Any]] = []
    for _ in range(runs):  # interleaved, so both sides see the same machine load
        engine.append(run_worker("engine", data_dir))
        bare.append(run_worker("bare", data_dir))
    engine_mem = run_worker("engine", data_dir, "--trace", "--digest")
    bare_mem = run_worker("bare", data_dir, "--trace", "--digest")
    package = [probe_import("import pytest_evaltasks") for _ in range(runs)]
    usable = [
        probe_import("from pytest_evaltasks import Registry, render_plain") for _ in range(runs)
    ]
    load_after = os.getloadavg()[0]

    mb = 1024 * 1024
    docs = engine[0]["docs"]
    e_wall = median(r["wall"] for r in engine)
    b_wall = median(r["wall"] for r in bare)
    e_peak = engine_mem["traced_peak"] / mb
    e_rss = median(r["rss_delta"] for r in engine) / mb
    ratio = e_wall / b_wall
    pair_ratio = median(e["wall"] / b["wall"] for e, b in zip(engine, bare, strict=True))
    identical = engine_mem["digest"] == bare_mem["digest"] and docs == bare[0]["docs"]

    print(
        f"{SPEC}: {len(TEST_ROWS)} tasks, {docs:,} prompts "
        f"({engine[0]['chars'] / mb:.0f} M chars), data {size / mb:.1f} MB jsonl at {data_dir}"
    )
    print(
        f"{runs} runs per side, each in a fresh interpreter, imports not timed; "
        f"load average {load_before:.1f} -> {load_after:.1f} on {os.cpu_count()} CPUs\n"
    )
    columns = (
        ("wall s", 9),
        ("min s", 9),
        ("cpu s", 9),
        ("docs/s", 10),
        ("traced peak MB", 16),
        ("RSS delta MB", 14),
    )
    header = f"{'':<12}" + "".join(f"{title:>{width}}" for title, width in columns)
    print(header)
    print("-" * len(header))
    for name, results, traced in (("engine", engine, engine_mem), ("bare loop", bare, bare_mem)):
        wall = median(r["wall"] for r in results)
        fastest = min(r["wall"] for r in results)
        cpu = median(r["cpu"] for r in results)
        peak = traced["traced_peak"] / mb
        rss = median(r["rss_delta"] for r in results) / mb
        print(
            f"{name:<12}{wall:>9.3f}{fastest:>9.3f}{cpu:>9.3f}{docs / wall:>10,.0f}"
            f"{peak:>16.1f}{rss:>14.1f}"
        )
    print(
        f"{'ratio':<12}{ratio:>8.2f}x   median engine wall / median bare-loop wall "
        f"(median of run-by-run ratios: {pair_ratio:.2f}x)\n"
    )

    phases = {name: median(r["phases"][name] for r in engine) for name in engine[0]["phases"]}
    print("engine phases (median s): " + " | ".join(f"{k} {v:.3f}" for k, v in phases.items()))
    package_ms = median(elapsed for elapsed, _ in package) * 1000
    usable_ms = median(elapsed for elapsed, _ in usable) * 1000
    print(
        f"import, clean interpreter (median ms): `import pytest_evaltasks` {package_ms:.0f} "
        f"[{', '.join(package[0][1]) or 'no heavy modules'}]; "
        f"`from pytest_evaltasks import Registry, render_plain` {usable_ms:.0f} "
        f"[{', '.join(usable[0][1]) or 'no heavy modules'}]"
    )
    print(f"prompts identical to the bare loop: {'yes' if identical else 'NO'}")

    checks = {
        "wall <= 0.30 s": e_wall <= 0.30,
        "traced peak <= 100 MB": e_peak <= 100,
        "RSS delta <= 100 MB": e_rss <= 100,
        "ratio <= 1.5x": ratio <= 1.5,
        "identical prompts": identical,
    }
    print("targets: " + ", ".join(f"{k} {'ok' if v else 'MISSED'}" for k, v in checks.items()))
    if profile:
        command = [sys.executable, __file__, "--worker", "profile", "--data", str(data_dir)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        print("\n" + done.stderr)
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
