"""Static typing for users: a task file checked by `mypy --strict` sees every `Metrics` member,
the type of a parametrised metric, and the fields of `TaskConfig` with their types."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from pytest_evaltasks import LightevalTaskConfig, Metrics
from pytest_evaltasks.engine import config as config_module
from pytest_evaltasks.engine.config import FEW_SHOT_SELECTIONS, FIELDS, REQUIRED
from pytest_evaltasks.engine.metrics import MetricRef
from pytest_evaltasks.errors import TaskConfigError

# The README walkthrough's capitals task, annotated as a `mypy --strict` project needs it.
GOOD = """\
from typing import Any, assert_type

from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics
from pytest_evaltasks.engine.metrics import MetricRef


def capitals_prompt(line: dict[str, Any], task_name: str) -> Doc:
    return Doc(task_name=task_name, query=f"Q: What is the capital of {line['country']}?\\nA:",
               choices=[f" {line['capital']}"], gold_index=0)


pass_at_1 = Metrics.pass_at_k({"k": 1})
assert_type(pass_at_1, MetricRef)
assert_type(Metrics.exact_match(sample_params=None), MetricRef)

TASKS_TABLE = [
    LightevalTaskConfig(name="capitals", prompt_function=capitals_prompt,
                        hf_repo="me/capitals", hf_subset="default",
                        evaluation_splits=["test"], few_shots_split="train",
                        metrics=[Metrics.exact_match], version=0),
    LightevalTaskConfig(name="capitals:gen", prompt_function=capitals_prompt,
                        hf_repo="me/capitals", hf_subset=None, evaluation_splits=("test",),
                        few_shots_select="sequential", generation_size=16,
                        stop_sequence=["\\n"], metrics=(pass_at_1, Metrics.quasi_exact_match),
                        version=2),
]
"""

BAD = """\
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics, Metrix


def capitals_prompt(line: dict[str, str], task_name: str) -> Doc:
    return Doc(query=line["country"], choices=[line["capital"]], gold_index=0)


TASKS_TABLE = [
    LightevalTaskConfig(name="capitals", prompt_function=capitals_prompt,
                        hf_repo="me/capitals", hf_subset="default",
                        evaluation_splits="test",
                        metrics=[Metrics.exact_match]),
    LightevalTaskConfig(name="capitals:typo", prompt_function=capitals_prompt,
                        hf_repo="me/capitals", hf_subset="default", few_shot_split="train",
                        metrics=[Metrics.exact_matc]),
]
shots: int = Metrics.pass_at_k({"k": 1})
"""

EXPECTED = (
    'Argument "evaluation_splits" to "TaskConfig" has incompatible type "str"',
    'Unexpected keyword argument "few_shot_split" for "TaskConfig"',
    '"type[Metrics]" has no attribute "exact_matc"',
    'Incompatible types in assignment (expression has type "MetricRef", variable has type "int")',
    'Module "pytest_evaltasks" has no attribute "Metrix"',  # a misspelt import
)


def test_mypy_strict_accepts_a_typed_task_file_and_rejects_wrong_fields(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]')")
    (tmp_path / "good_tasks.py").write_text(GOOD, encoding="utf-8")
    (tmp_path / "bad_tasks.py").write_text(BAD, encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--show-absolute-path",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            "good_tasks.py",
            "bad_tasks.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in result.stdout.splitlines() if ": error: " in line]
    assert result.returncode == 1, result.stdout + result.stderr
    assert not [
        line for line in lines if "good_tasks.py" not in line and "bad_tasks.py" not in line
    ]
    assert not [line for line in lines if "good_tasks.py" in line], result.stdout
    found = [line.split(": error: ", 1)[1] for line in lines]
    missing = [e for e in EXPECTED if not any(message.startswith(e) for message in found)]
    assert not missing, result.stdout
    assert len(lines) == len(EXPECTED), result.stdout


def test_the_typed_task_file_runs_as_checked(tmp_path: Path) -> None:
    """What mypy accepts, the runtime accepts: the same file imports and validates."""
    path = tmp_path / "good_tasks.py"
    path.write_text(GOOD, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("good_tasks_runtime", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    first, second = module.TASKS_TABLE
    assert first.metrics == [Metrics.exact_match]
    assert second.evaluation_splits == ["test"]
    assert second.metrics[0] == Metrics.pass_at_k({"k": 1})
    assert isinstance(second.metrics[0], MetricRef)


def _typed_signature() -> ast.FunctionDef:
    """`TaskConfig.__init__` as type checkers see it (the `if TYPE_CHECKING:` branch)."""
    tree = ast.parse(Path(inspect.getfile(config_module)).read_text(encoding="utf-8"))
    cls = next(
        node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "TaskConfig"
    )
    branch = next(
        node
        for node in cls.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    return next(
        node
        for node in branch.body
        if isinstance(node, ast.FunctionDef) and node.name == "__init__"
    )


def test_the_typed_signature_lists_every_field_with_its_default() -> None:
    init = _typed_signature()
    assert not init.args.args[1:] and init.args.kwarg is None  # keyword-only, nothing else
    names = [arg.arg for arg in init.args.kwonlyargs]
    assert names == list(FIELDS)
    for arg, default in zip(init.args.kwonlyargs, init.args.kw_defaults, strict=True):
        recorded = FIELDS[arg.arg][1]
        if recorded is REQUIRED:
            assert default is None, f"{arg.arg} is required"
        elif callable(recorded):  # a list default: shown as `...`
            assert default is not None and ast.literal_eval(default) is Ellipsis, arg.arg
        else:
            assert default is not None and ast.literal_eval(default) == recorded, arg.arg
    assert typing.get_args(config_module.FewShotSelection) == FEW_SHOT_SELECTIONS


def test_runtime_validation_is_unchanged_behind_the_typed_signature() -> None:
    def prompt(line: dict[str, str], task_name: str) -> None:
        return None

    base = {"prompt_function": prompt, "hf_repo": "r", "hf_subset": None, "metrics": []}
    with pytest.raises(TaskConfigError, match="did you mean few_shots_split"):
        LightevalTaskConfig(name="t", few_shot_split="train", **base)
    with pytest.raises(TaskConfigError, match="must be a list of strings, not a single string"):
        LightevalTaskConfig(name="t", evaluation_splits="test", **base)
    made = LightevalTaskConfig(name="t", **base)
    assert made.evaluation_splits == ["validation"]
    assert made.source_file == __file__  # the caller, as before
    assert inspect.signature(LightevalTaskConfig).parameters.keys() == {"data"}
