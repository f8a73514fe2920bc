"""Benchmark: what a port item costs beside the two builds it compares, as the rows grow.

Writes a throwaway project: one lighteval-style task reading N synthetic rows (MMLU-shaped: a
question, four choices, an answer; 5-shot from a dev split) and a copy of it whose prompt has one
changed delimiter, declared as a port. For N in `--rows`, each in a fresh Python process, it
measures the port item's steps as `plugin/port_items.port_check` runs them:

* build a, build b: each side rendered by its source (`Registry.render`);
* read: both sides as port docs (`engine/port_docs`): every prompt text made;
* compare: pairing and classifying (`snapshot/port_compare`), and laying out the record;

and, as the baseline, what the two sides' own task items spend on the same builds: each build
fingerprinted as its snapshot records it (`build_snapshot`: every prompt made and hashed). It
prints each step's time, the port's total against the two task items', and the comparison's
time per row (flat when alignment is linear in the rows). Every doc differs (the delimiter), so
every pair goes through the classifier: the worst case.

With `--lm-eval` (in an environment with lm-eval installed) it measures a bundled port instead:
`arc:easy|5` against lm-eval's `arc_easy|5` on the bundled rows, the same steps, where one side's
build is lm-eval's own.

Usage: `python benchmarks/bench_port.py [--rows 2000 8000 32000] [--runs N] [--lm-eval]`
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

MODULE = """
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

LETTERS = "ABCD"


def prompt(row, task_name, sep="\\n"):
    lines = [row["question"], *(f"{LETTERS[i]}. {c}" for i, c in enumerate(row["choices"]))]
    return Doc(query=sep.join(lines) + sep + "Answer:", choices=[f" {x}" for x in LETTERS],
               gold_index=row["answer"])


def prompt_copy(row, task_name):
    return prompt(row, task_name, sep="\\n\\n")


def cfg(name, fn):
    return LightevalTaskConfig(name=name, prompt_function=fn, hf_repo="bench", hf_subset="main",
                               metrics=[Metrics.loglikelihood_acc],
                               hf_avail_splits=["dev", "test"], evaluation_splits=["test"],
                               few_shots_split="dev", few_shots_select="sequential", version=0)


TASKS_TABLE = [cfg("quiz", prompt), cfg("quiz_copy", prompt_copy)]
"""

CHILD = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from pytest_evaltasks.engine.port_docs import port_docs
    from pytest_evaltasks.engine.ports import Port, PortSide
    from pytest_evaltasks.engine.registry import Registry
    from pytest_evaltasks.engine.run_settings import RunSettings
    from pytest_evaltasks.snapshot.built import build_snapshot
    from pytest_evaltasks.snapshot.port_compare import compare
    from pytest_evaltasks.snapshot.port_record import port_text

    root, data, folder_a, spec_a, folder_b, spec_b, expect = sys.argv[1:]
    if folder_b == "lm_eval:tasks":
        import lm_eval
        folder_b = str(Path(lm_eval.__file__).parent / "tasks")
    run = RunSettings()
    times, rendered = {}, []
    for step, folder, spec in (("build a", folder_a, spec_a), ("build b", folder_b, spec_b)):
        start = time.perf_counter()
        registry = Registry([Path(folder)], data_dir=Path(data), root=Path(root))
        (request,) = registry.resolve(spec)
        rendered.append(registry.render(request, run))
        times[step] = time.perf_counter() - start
    start = time.perf_counter()
    a, b = (port_docs(r, run) for r in rendered)
    times["read"] = time.perf_counter() - start
    start = time.perf_counter()
    found = compare(a, b)
    port_text(Port("bench", PortSide(spec_a), PortSide(spec_b)), found, {"a": "-", "b": "-"})
    times["compare"] = time.perf_counter() - start
    if expect != "-":
        assert [d.kind for d in found.differences] == [expect], found
        assert found.aligned == len(a)
    start = time.perf_counter()
    for each in rendered:
        build_snapshot(each, run, root=Path(root))
    times["items"] = time.perf_counter() - start + times["build a"] + times["build b"]
    print(json.dumps(times))
    """
)


def write_project(root: Path, rows: int) -> None:
    data = root / "tasks" / "data" / "bench" / "main"
    data.mkdir(parents=True)
    (root / "tasks" / "quiz.py").write_text(MODULE, encoding="utf-8")
    for split, count in (("dev", 5), ("test", rows)):
        with (data / f"{split}.jsonl").open("w", encoding="utf-8") as out:
            for i in range(count):
                row = {
                    "question": f"Question {i} of the {split} split: which option is right?",
                    "choices": [f"option {k} for {i}" for k in range(4)],
                    "answer": i % 4,
                }
                out.write(json.dumps(row) + "\n")


def measure(root: Path, sides: tuple[str, ...], expect: str) -> dict[str, float]:
    """One fresh process's times for a port of `sides` (folder a, spec a, folder b, spec b)."""
    data = root / "tasks" / "data"
    command = [sys.executable, "-c", CHILD, str(root), str(data), *sides, expect]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[2000, 8000, 32000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lm-eval", action="store_true", help="a bundled port to lm-eval")
    args = parser.parse_args()
    print(f"{'rows':>7} {'build a':>9} {'build b':>9} {'read':>8} {'compare':>8} {'port':>8} "
          f"{'2 items':>8} {'port/items':>11} {'compare/row':>12}", flush=True)  # fmt: skip
    for rows in [4] if args.lm_eval else args.rows:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            if args.lm_eval:
                root = REPO
                sides = (str(REPO / "tasks"), "arc:easy|5", "lm_eval:tasks", "arc_easy|5")
                expect = "-"
            else:
                write_project(root, rows)
                sides = (str(root / "tasks"), "quiz|5", str(root / "tasks"), "quiz_copy|5")
                expect = "delimiter or whitespace"
            runs = [measure(root, sides, expect) for _ in range(args.runs)]
        median = {step: statistics.median(run[step] for run in runs) for step in runs[0]}
        total = median["build a"] + median["build b"] + median["read"] + median["compare"]
        print(
            f"{rows:>7} {median['build a']:>8.3f}s {median['build b']:>8.3f}s "
            f"{median['read']:>7.3f}s {median['compare']:>7.3f}s {total:>7.3f}s "
            f"{median['items']:>7.3f}s {total / median['items']:>10.2f}x "
            f"{median['compare'] / rows * 1e6:>9.1f} us",
            flush=True,
        )


if __name__ == "__main__":
    main()
