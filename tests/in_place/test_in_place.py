"""lighteval's own task files, unmodified and in place, give lighteval's prompts.

Needs lighteval 0.13 (`tox -e lighteval`, or the harnesses venv of `.ci/run`); skipped without it.
Each task is rendered twice, by lighteval's `LightevalTask` and `PromptManager` (a one-task run:
global generators seeded with 1234) and by our registry pointed at lighteval's task folder, and
every doc's id, task name, few-shot ids, plain prompt and chat messages must be equal.
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path

import pytest

lighteval = pytest.importorskip("lighteval")

from reference import lighteval_prompts, our_prompts  # noqa: E402

from pytest_evaltasks import Registry  # noqa: E402
from pytest_evaltasks.engine.metrics import MetricRef  # noqa: E402
from pytest_evaltasks.snapshot.facts import metric_identity  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
LIGHTEVAL_TASKS = Path(lighteval.__file__).parent / "tasks" / "tasks"
MULTILINGUAL_TASKS = Path(lighteval.__file__).parent / "tasks" / "multilingual" / "tasks"
BUNDLED_DATA = REPO / "tasks" / "data"
REALDATA = Path(os.environ.get("EVALTASKS_SHARED_DIR", REPO.parent / "shared")) / "realdata"

BUNDLED_CASES = [
    "arc:easy|0",
    "arc:easy|5",
    "arc:challenge|5",
    "mmlu:anatomy|0",
    "mmlu:virology|5",
    "mmlu:world_religions|5",
    "gsm8k|0",
    "gsm8k|5",
    "hellaswag|0",
    "hellaswag|5",
    "truthfulqa:mc|0",
    "piqa|0",
    "piqa|5",
    "openbookqa|5",
    "boolq:contrastset|0",
]
"""Tasks over the bundled synthetic rows (always present). Tasks whose few-shot pool is their
evaluation split are compared at 0 shots: at more, lighteval may show a question as its own
example, which we do not (docs/differences-from-lighteval.md)."""

REAL_CASES = [
    "arc:easy|5",
    "arc:challenge|0",
    "arc:challenge|5",
    "mmlu:abstract_algebra|5",
    "mmlu:anatomy|5",
    "mmlu:philosophy|0",
    "mmlu:us_foreign_policy|5",
    "gsm8k|0",
    "gsm8k|5",
    "hellaswag|0",
    "truthfulqa:mc|0",
    "winogrande|0",
    "piqa|0",
]
"""Tasks over the real slices, when they are present (real winogrande has no train slice)."""


@pytest.fixture(scope="module")
def registry() -> Registry:
    """Our registry over lighteval's own task folder, imported in place."""
    logging.disable(logging.CRITICAL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Registry([LIGHTEVAL_TASKS], data_dir=None)


def compare(registry: Registry, spec: str, data: Path, system_prompt: str | None = None) -> None:
    """Render `spec` both ways over `data` and require equality, doc by doc."""
    registry.data_dir = data
    (task,) = registry.load(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        their_name, theirs = lighteval_prompts(
            registry.entries[task.name].raw, data, task.num_fewshots, system_prompt
        )
        our_name, ours = our_prompts(task, system_prompt)
    assert our_name == their_name
    assert [doc["id"] for doc in ours] == [doc["id"] for doc in theirs]
    for mine, reference in zip(ours, theirs, strict=True):
        assert mine == reference, f"{spec} doc {reference['id']} differs"


@pytest.mark.parametrize("spec", BUNDLED_CASES)
def test_prompts_equal_lighteval_on_bundled_rows(registry: Registry, spec: str) -> None:
    compare(registry, spec, BUNDLED_DATA)


@pytest.mark.realdata
@pytest.mark.parametrize("spec", REAL_CASES)
def test_prompts_equal_lighteval_on_real_rows(registry: Registry, spec: str) -> None:
    if not REALDATA.is_dir():
        pytest.skip(f"real data slices not found at {REALDATA} (set EVALTASKS_SHARED_DIR)")
    compare(registry, spec, REALDATA)


def test_system_prompt_equals_lighteval(registry: Registry) -> None:
    compare(registry, "mmlu:anatomy|5", BUNDLED_DATA, system_prompt="You are a careful grader.")


def test_lighteval_metrics_keep_their_member_identity(registry: Registry) -> None:
    config = registry.configs["mmlu:anatomy"]
    assert all(isinstance(metric, MetricRef) for metric in config.metrics)
    identities = [metric_identity(metric) for metric in config.metrics]
    from pytest_evaltasks import Metrics

    ours = [metric_identity(getattr(Metrics, metric.name)) for metric in config.metrics]
    assert identities == ours  # the stand-in and lighteval record the same metrics


def test_a_parametrised_lighteval_metric_records_its_parameters() -> None:
    from lighteval.metrics.metrics import Metrics as LightevalMetrics

    from pytest_evaltasks import Metrics
    from pytest_evaltasks.sources.lighteval.adapter import convert_metric

    converted = convert_metric(LightevalMetrics.pass_at_k(sample_params={"k": 1, "n": 4}))
    assert metric_identity(converted) == metric_identity(Metrics.pass_at_k({"k": 1, "n": 4}))
    macro = metric_identity(convert_metric(LightevalMetrics.f1_score_macro.value))
    micro = metric_identity(convert_metric(LightevalMetrics.f1_score_micro.value))
    assert macro != micro


def test_both_lighteval_folders_register_nearly_every_name(registry: Registry) -> None:
    """lighteval's own loading, module by module, against ours (offline modules only)."""
    import importlib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both = Registry([LIGHTEVAL_TASKS, MULTILINGUAL_TASKS], data_dir=None)
    theirs: dict[Path, set[str]] = {}
    for folder, prefix in (
        (LIGHTEVAL_TASKS, "lighteval.tasks.tasks"),
        (MULTILINGUAL_TASKS, "lighteval.tasks.multilingual.tasks"),
    ):
        files = [(p, f"{prefix}.{p.stem}") for p in sorted(folder.glob("*.py"))]
        files += [(d / "main.py", f"{prefix}.{d.name}.main") for d in sorted(folder.iterdir())
                  if (d / "main.py").is_file()]  # fmt: skip
        for path, name in files:
            try:
                module = importlib.import_module(name)
            except Exception:
                continue
            theirs[path.resolve()] = {c.name for c in getattr(module, "TASKS_TABLE", [])}
    ours: dict[Path, set[str]] = {}
    for name, entry in both.entries.items():
        ours.setdefault(entry.origin.resolve(), set()).add(name)
    for unusable in both.unusable.values():
        for path in unusable.paths:
            ours.setdefault(path.resolve(), set()).add(unusable.name)
    total = sum(len(names) for names in theirs.values())
    held = sum(len(names & ours.get(path, set())) for path, names in theirs.items())
    assert total > 600
    assert held >= 0.99 * total


def test_names_defined_twice_in_lighteval_use_the_last_definition(registry: Registry) -> None:
    """lighteval's own files cannot be edited by its users: as lighteval does, the last
    definition of a name wins, with a warning naming both places."""
    if not MULTILINGUAL_TASKS.is_dir():
        pytest.skip("no multilingual folder")
    import importlib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        multilingual = Registry([MULTILINGUAL_TASKS], data_dir=None)
        xnli = importlib.import_module("lighteval.tasks.multilingual.tasks.xnli")
    theirs = {config.name: config for config in xnli.TASKS_TABLE}  # the last one wins, as in
    # lighteval's registry (its loader reaches the network offline, so it is not used here)
    doubled = [w for w in multilingual.shadowed if "xnli" in w]
    assert len(doubled) >= 6, "xnli.py defines six names twice in lighteval 0.13"
    assert not [u for u in multilingual.unusable.values() if "defined" in u.reason]
    for name in ("xnli_eng_mcf", "xnli_fra_cf"):  # (xnli2.py's need the multilingual extra)
        assert name in multilingual.entries
        assert any(f"task {name!r}" in warning for warning in doubled)
    for name in ("xnli_eng_mcf", "xnli_fra_cf"):  # the last definition is used
        ours, lighteval_config = multilingual.entries[name].raw, theirs[name]
        assert ours is lighteval_config
    assert len(multilingual.entries) > 40_000
