"""Compare our prompts with lighteval's for the same task files and rows (a developer tool).

Runs the task string through our engine in this interpreter, and through lighteval 0.13 in
another (`--lighteval-python`, default: this one), then compares every doc's plain prompt,
chat messages and few-shot ids. Task files are written for pytest_evaltasks (two imports
changed from lighteval); for the lighteval side those imports are pointed back at lighteval.
Rows come from the local data root, read by `datasets` on the lighteval side.

    python tests/tools/compare_with_lighteval.py --tasks-dir tasks --data tasks/data \\
        --spec "mmlu:anatomy|5,gsm8k|0" --lighteval-python /path/to/venv-with-lighteval/bin/python

Exit status 0 when every doc matches. The differences from lighteval that
docs/differences-from-lighteval.md lists show up on purpose: e.g. a task whose few-shot pool is its
evaluation split (lighteval may show a question as its own example).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

Prompts = dict[str, list[dict[str, Any]]]


def our_prompts(tasks_dir: Path, data: Path, spec: str, system_prompt: str | None) -> Prompts:
    """Every doc of every task, rendered by pytest_evaltasks."""
    import warnings

    from pytest_evaltasks import Registry, render_messages, render_plain

    warnings.simplefilter("ignore")
    out: Prompts = {}
    for task in Registry([tasks_dir], data_dir=data).load(spec):
        out[task.full_name] = [
            {
                "id": doc.id,
                "plain": render_plain(doc, system_prompt),
                "messages": render_messages(doc, system_prompt),
                "fewshot": [example.id for example in doc.fewshot_samples],
            }
            for doc in task.get_docs()
        ]
    return out


def reference_prompts(tasks_dir: Path, data: Path, spec: str, system_prompt: str | None) -> Prompts:
    """The same, through lighteval's LightevalTask and PromptManager (run with lighteval)."""
    import importlib.util
    import logging
    import types

    from lighteval.metrics.metrics import Metrics
    from lighteval.tasks.lighteval_task import LightevalTaskConfig
    from lighteval.tasks.requests import Doc, SamplingMethod

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "in_place"))
    from reference import lighteval_prompts

    class AnyMetrics:
        """lighteval's `Metrics`, tolerating names only our stand-in has: metrics never
        change a prompt, so any lighteval metric will do for those."""

        def __getattr__(self, name: str) -> Any:
            return getattr(Metrics, name, Metrics.exact_match)

    logging.disable(logging.CRITICAL)
    alias = types.ModuleType("pytest_evaltasks")
    for name, value in {
        "LightevalTaskConfig": LightevalTaskConfig,
        "TaskConfig": LightevalTaskConfig,
        "Doc": Doc,
        "SamplingMethod": SamplingMethod,
        "Metrics": AnyMetrics(),
    }.items():
        setattr(alias, name, value)
    for module in (
        "pytest_evaltasks",
        *(f"pytest_evaltasks.engine.{m}" for m in ("config", "doc", "metrics")),
    ):
        sys.modules[module] = alias
    configs: dict[str, Any] = {}
    files = [*sorted(tasks_dir.glob("*.py")), *sorted(tasks_dir.glob("*/main.py"))]
    for number, path in enumerate(files):
        module_spec = importlib.util.spec_from_file_location(f"_reference_{number}", path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        configs.update({config.name: config for config in getattr(module, "TASKS_TABLE", [])})
    prefixes: dict[str, list[str]] = {}
    for name in sorted(configs):
        prefixes.setdefault(name.split(":")[0], []).append(name)
    out: Prompts = {}
    for item in spec.split(","):
        name, _, shots = item.strip().partition("|")
        members = prefixes[name] if len(prefixes.get(name, [])) > 1 else [name]
        for member in members:
            full_name, docs = lighteval_prompts(
                configs[member], data, int(shots or 0), system_prompt
            )
            out[full_name] = [{key: doc[key] for key in ("id", "plain", "messages", "fewshot")}
                              for doc in docs]  # fmt: skip
    return out


def compare(ours: Prompts, reference: Prompts) -> int:
    """Print differences; return how many docs differ."""
    differing = 0
    for name in sorted(set(ours) | set(reference)):
        if name not in ours or name not in reference:
            print(f"{name}: only in {'ours' if name in ours else 'lighteval'}")
            differing += 1
            continue
        a, b = reference[name], ours[name]
        if [d["id"] for d in a] != [d["id"] for d in b]:
            print(f"{name}: doc order differs")
            differing += 1
            continue
        for ref_doc, our_doc in zip(a, b, strict=True):
            for field in ("fewshot", "plain", "messages"):
                if ref_doc[field] != our_doc[field]:
                    differing += 1
                    print(f"{name} doc {ref_doc['id']}: {field} differs")
                    print(f"  lighteval: {str(ref_doc[field])[:300]!r}")
                    print(f"  ours:      {str(our_doc[field])[:300]!r}")
                    break
    total = sum(len(docs) for docs in reference.values())
    print(f"{len(reference)} tasks, {total} docs compared, {differing} differ")
    return differing


def main(argv: list[str] | None = None) -> int:
    """Run both sides and compare."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks-dir", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--spec", required=True)
    parser.add_argument("--system-prompt")
    parser.add_argument("--lighteval-python", default=sys.executable)
    parser.add_argument("--reference", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    tasks_dir, data = args.tasks_dir.resolve(), args.data.resolve()
    if args.reference:
        json.dump(reference_prompts(tasks_dir, data, args.spec, args.system_prompt), sys.stdout)
        return 0
    command = [args.lighteval_python, __file__, "--reference", "--tasks-dir", str(tasks_dir),
               "--data", str(data), "--spec", args.spec]  # fmt: skip
    if args.system_prompt is not None:
        command += ["--system-prompt", args.system_prompt]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
        return 2
    reference = json.loads(done.stdout)
    ours = our_prompts(tasks_dir, data, args.spec, args.system_prompt)
    return 1 if compare(ours, reference) else 0


if __name__ == "__main__":
    raise SystemExit(main())
