"""Benchmark: a large registry (50,000 tasks in 80 generated modules), and `all` with `-n`.

* `--evaltasks-list` against importing the same 80 modules bare (a script that imports each
  and reads its `TASKS_TABLE`), interleaved over `--runs` pairs: the registry's own cost.
* `--evaltasks all` over a 2,000-task folder, serial against `-n 2` (needs pytest-xdist): small
  tasks (10 docs each) and larger ones (400 docs each).

Usage: `python benchmarks/bench_registry.py [--runs 5] [--keep DIR]`
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import interleaved, timed_run

MODULE = """\
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics


def prompt(line, task_name):
    return Doc(task_name=task_name, query=f"Q: {{line['q']}}\\nA:", choices=[" yes", " no"],
               gold_index=line["label"])


TASKS_TABLE = [
    LightevalTaskConfig(name=f"{family}:{{i}}", prompt_function=prompt, hf_repo="bench/{data}",
                        hf_subset="default", metrics=[Metrics.loglikelihood_acc],
                        evaluation_splits=["test"], few_shots_split="train")
    for i in range({count})
]
"""

BARE_IMPORT = """\
import importlib.util, sys
from pathlib import Path
modules = []  # kept, as a registry keeps them
for path in sorted(Path(sys.argv[1]).glob("*.py")):
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    modules.append(module)
print(sum(len(module.TASKS_TABLE) for module in modules))
"""

REGISTRY = """\
import sys
from pytest_evaltasks.engine.registry import Registry
print(len(Registry([sys.argv[1]]).entries))
"""

def write_folder(root: Path, modules: int, per_module: int, rows: int) -> Path:
    """`modules` task modules of `per_module` tasks each, over one dataset of `rows` rows."""
    tasks = root / "tasks"
    data = tasks / "data" / "bench" / f"rows{rows}" / "default"
    data.mkdir(parents=True, exist_ok=True)
    for split, count in (("test", rows), ("train", 4)):
        lines = [json.dumps({"q": f"{split} {i}", "label": i % 2}) for i in range(count)]
        (data / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for number in range(modules):
        text = MODULE.format(family=f"family{number:02d}", count=per_module, data=f"rows{rows}")
        (tasks / f"family{number:02d}.py").write_text(text, encoding="utf-8")
    return tasks


def pytest(*args: str) -> list[str]:
    """A pytest command in this interpreter."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]


def main(argv: list[str] | None = None) -> int:
    """The listing against bare imports, then `all` serial against `-n 2`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args(argv)
    base = args.keep or Path(tempfile.mkdtemp(prefix="evaltasks-registry-"))

    large = base / "large"
    tasks = write_folder(large, 80, 625, rows=10)
    script = large / "bare_import.py"
    script.write_text(BARE_IMPORT, encoding="utf-8")
    registry = large / "registry.py"
    registry.write_text(REGISTRY, encoding="utf-8")
    own = interleaved(
        [sys.executable, str(registry), str(tasks)],
        [sys.executable, str(script), str(tasks)],
        large,
        args.runs,
    )
    print(own.line("Registry(...) (50,000 tasks, 80 modules)", "bare import"))
    print(f"  the registry costs {100 * (own.ratio - 1):+.0f}% over importing the modules "
          f"(target: at most +20%)")  # fmt: skip
    listing = interleaved(
        pytest("--evaltasks-list", f"--evaltasks-dir={tasks}"),
        [sys.executable, str(script), str(tasks)],
        large,
        args.runs,
    )
    print(listing.line("pytest --evaltasks-list (the same)", "bare import"))
    print(f"  the whole command, pytest's start included: {100 * (listing.ratio - 1):+.0f}%")

    for rows in (10, 400):
        folder = base / f"all-{rows}"
        tasks = write_folder(folder, 20, 100, rows=rows)
        record = timed_run(pytest("--evaltasks", "all", "--snapshot-update", "-n", "2"), folder)
        if record.code != 0:
            raise SystemExit(f"recording the {rows}-row tasks failed (exit {record.code})")
        pair = interleaved(
            pytest("--evaltasks", "all", "-n", "2"),
            pytest("--evaltasks", "all"),
            folder,
            max(3, args.runs // 2),
        )
        print(pair.line(f"all, 2,000 tasks x {rows} docs, -n 2", "serial"))
    print("targets: -n 2 no slower than serial; faster where each task has real work")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
