"""Properties of few-shot selection and doc building that must hold for any data.

- never more than `num_fewshots` examples, all taken from the pool, none repeated;
- the evaluated doc is never among its own examples (compared by content);
- `get_docs` is idempotent;
- results do not depend on the global `random` state or on PYTHONHASHSEED;
- the global `random` state is never changed (registry load, get_docs, every selection).
"""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import example as known_case
from hypothesis import strategies as st

from pytest_evaltasks import Doc, FewShotSampler, Task, TaskConfig
from pytest_evaltasks.engine.task import FewShotFromEvalWarning
from pytest_evaltasks.errors import FewShotError

SELECTIONS = ["balanced", "random", "sequential", "random_sampling", "random_sampling_from_train"]
SAMPLING = {"random_sampling": 1, "random_sampling_from_train": 0}  # extra draws per doc

PROPERTY_SETTINGS = settings(
    max_examples=50,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def content(doc: Doc) -> tuple[Any, ...]:
    return (doc.query, doc.choices, doc.gold_index, doc.instruction)


@st.composite
def docs(draw: st.DrawFn) -> Doc:
    """Small docs from a tiny alphabet, so equal-content docs are common."""
    choices = draw(st.lists(st.sampled_from(["x", "y", "", " z "]), min_size=1, max_size=3))
    gold = draw(
        st.one_of(
            st.integers(0, len(choices) - 1),
            st.lists(st.integers(0, len(choices) - 1), min_size=1, max_size=2),
        )
    )
    return Doc(
        query=draw(st.sampled_from(["a", "b", "c", "d"])),
        choices=choices,
        gold_index=gold,
        instruction=draw(st.sampled_from([None, "", "I: "])),
        fewshot_sorting_class=draw(st.sampled_from([None, "", "k1", "k2"])),
    )


@st.composite
def sampling_cases(draw: st.DrawFn) -> tuple[list[Doc], Doc, str, int, int]:
    pool = draw(st.lists(docs(), min_size=0, max_size=9))
    if pool and draw(st.booleans()):
        evaluated = copy.deepcopy(draw(st.sampled_from(pool)))  # equal content, other object
    else:
        evaluated = draw(docs())
    selection = draw(st.sampled_from(SELECTIONS))
    shots = draw(st.integers(0, 6))
    seed = draw(st.integers(0, 4))
    return pool, evaluated, selection, shots, seed


def draw_examples(
    pool: list[Doc], evaluated: Doc, selection: str, shots: int, seed: int, rng_seed: int = 42
) -> list[int]:
    """Positions in `pool` of the examples drawn by a fresh sampler."""
    sampler = FewShotSampler(lambda: list(pool), selection, "prop")
    examples = sampler.sample(shots, variance_seed=seed, rng=random.Random(rng_seed), doc=evaluated)
    positions = []
    for example in examples:
        matches = [i for i, doc in enumerate(pool) if doc is example]
        assert len(matches) == 1, "an example is not a pool doc"
        positions.append(matches[0])
    return positions


def too_small(pool: list[Doc], selection: str, shots: int) -> bool:
    return selection in SAMPLING and shots > 0 and shots + SAMPLING[selection] > len(pool)


# --- the sampler -------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(sampling_cases())
def test_sampler_examples_are_few_distinct_pool_docs_never_the_evaluated_one(
    case: tuple[list[Doc], Doc, str, int, int],
) -> None:
    pool, evaluated, selection, shots, seed = case
    if too_small(pool, selection, shots):
        with pytest.raises(FewShotError, match=f"only {len(pool)} docs"):
            draw_examples(pool, evaluated, selection, shots, seed)
        return
    positions = draw_examples(pool, evaluated, selection, shots, seed)
    assert len(positions) <= shots
    assert len(set(positions)) == len(positions)
    assert all(content(pool[i]) != content(evaluated) for i in positions)
    if selection in ("random", "sequential"):
        # these draw the whole pool: every pool doc but the leaked ones is available
        available = sum(content(doc) != content(evaluated) for doc in pool)
        assert len(positions) == min(shots, available)


@PROPERTY_SETTINGS
@given(sampling_cases(), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_sampler_ignores_and_keeps_the_global_random_state(
    case: tuple[list[Doc], Doc, str, int, int], global_a: int, global_b: int
) -> None:
    pool, evaluated, selection, shots, seed = case
    if too_small(pool, selection, shots):
        return
    random.seed(global_a)
    state = random.getstate()
    first = draw_examples(pool, evaluated, selection, shots, seed)
    assert random.getstate() == state
    random.seed(global_b)
    state = random.getstate()
    second = draw_examples(pool, evaluated, selection, shots, seed)
    assert random.getstate() == state
    assert first == second


# --- tasks over files --------------------------------------------------------------------------

row_strategy = st.fixed_dictionaries(
    {
        "q": st.sampled_from(["a", "b", "c", "d", "e"]),
        "label": st.sampled_from(["A", "B", "", "C"]),
        "n": st.one_of(st.integers(-3, 3), st.floats(-2, 2, allow_nan=False)),
    }
)


def prompt(row: dict[str, Any], task_name: str) -> Doc:
    return Doc(query=f"{row['q']} {row['n']}", choices=[row["label"], "other"], gold_index=0)


@st.composite
def task_cases(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "eval_rows": draw(st.lists(row_strategy, min_size=1, max_size=8)),
        # None: no train split, so the pool is the evaluation split itself
        "train_rows": draw(st.one_of(st.none(), st.lists(row_strategy, min_size=0, max_size=8))),
        "selection": draw(st.sampled_from(SELECTIONS)),
        "shots": draw(st.integers(0, 4)),
        "seed": draw(st.integers(0, 3)),
        "dedupe": draw(st.booleans()),
    }


def build_task(directory: Path, case: dict[str, Any]) -> Task:
    base = directory / "org/p/default"
    base.mkdir(parents=True, exist_ok=True)
    splits = {"validation": case["eval_rows"]}
    if case["train_rows"] is not None:
        splits["train"] = case["train_rows"]
    for split, rows in splits.items():
        (base / f"{split}.jsonl").write_text(
            "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
        )
    config = TaskConfig(
        name="prop",
        prompt_function=prompt,
        hf_repo="org/p",
        hf_subset="default",
        metrics=[],
        hf_avail_splits=list(splits),
        few_shots_select=case["selection"],
        num_fewshots=case["shots"],
        must_remove_duplicate_docs=case["dedupe"],
    )
    return Task(config, data_dir=directory)


def observe(docs: list[Doc]) -> list[tuple[Any, ...]]:
    return [
        (doc.id, content(doc), doc.task_name, [(ex.id, content(ex)) for ex in doc.fewshot_samples])
        for doc in docs
    ]


def get_docs_or_error(task: Task, seed: int) -> list[Doc] | FewShotError:
    try:
        return task.get_docs(variance_seed=seed)
    except FewShotError as exc:
        return exc


@PROPERTY_SETTINGS
@given(task_cases(), st.integers(0, 1000), st.integers(0, 1000))
def test_task_docs_properties(case: dict[str, Any], global_a: int, global_b: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore", FewShotFromEvalWarning)  # expected without a train split
        random.seed(global_a)
        state = random.getstate()
        task = build_task(Path(tmp), case)
        first = get_docs_or_error(task, case["seed"])
        assert random.getstate() == state, "get_docs changed the global random state"
        random.seed(global_b)
        second = get_docs_or_error(task, case["seed"])
        fresh = get_docs_or_error(build_task(Path(tmp), case), case["seed"])

    if isinstance(first, FewShotError):
        assert isinstance(second, FewShotError) and isinstance(fresh, FewShotError)
        assert case["selection"] in SAMPLING
        assert "'prop'" in str(first)
        return
    assert not isinstance(second, FewShotError) and not isinstance(fresh, FewShotError)
    # idempotent, and independent of the global random state
    assert observe(first) == observe(second) == observe(fresh)
    shots = case["shots"]
    for doc in first:
        assert doc.task_name == f"prop|{shots}"
        assert len(doc.fewshot_samples) <= shots
        assert all(content(ex) != content(doc) for ex in doc.fewshot_samples)
        assert len({id(ex) for ex in doc.fewshot_samples}) == len(doc.fewshot_samples)
    if case["dedupe"]:
        contents = [content(doc) for doc in first]
        assert len(contents) == len(set(map(repr, contents)))
    else:
        assert len(first) == len(case["eval_rows"])


# --- registry load -----------------------------------------------------------------------------

TASK_FILE = """\
import random as _stdlib_random
from pytest_evaltasks import Doc, LightevalTaskConfig


def prompt(row, task_name):
    return Doc(query=row["q"], choices=[row["label"], "zz"], gold_index=0)


TASKS_TABLE = [
    LightevalTaskConfig(
        name=name, prompt_function=prompt, hf_repo="org/h", hf_subset="default",
        metrics=["acc"], few_shots_select=selection,
    )
    for name, selection in [
        ("fam:balanced", "balanced"),
        ("fam:random", "random"),
        ("fam:sequential", "sequential"),
        ("fam:random_sampling", "random_sampling"),
        ("fam:random_sampling_from_train", "random_sampling_from_train"),
        ("other", None),
    ]
]
"""


def write_registry_fixture(root: Path) -> tuple[Path, Path]:
    tasks = root / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / "fam.py").write_text(TASK_FILE, encoding="utf-8")
    data = root / "data" / "org/h/default"
    data.mkdir(parents=True, exist_ok=True)
    labels = ["B", "A", "C", "", "A", "B", "A", "C", "D", "A", "B", ""]
    (data / "train.jsonl").write_text(
        "".join(
            json.dumps({"q": f"t{i}", "label": label}) + "\n" for i, label in enumerate(labels)
        ),
        encoding="utf-8",
    )
    (data / "validation.jsonl").write_text(
        "".join(json.dumps({"q": f"e{i}", "label": "E"}) + "\n" for i in range(9)),
        encoding="utf-8",
    )
    return tasks, root / "data"


RENDER_ALL = """\
import json
import random
import sys

from pytest_evaltasks import Registry, render_messages, render_plain


def render_all(tasks_dir, data_dir):
    registry = Registry(task_dirs=[tasks_dir], data_dir=data_dir)
    out = {"supersets": registry.supersets(), "names": registry.names, "tasks": []}
    for task in registry.load("other|2,fam|3,fam@k=1|2,other|2"):
        for seed in (0, 1, 2):
            docs = task.get_docs(variance_seed=seed)
            out["tasks"].append(
                [task.full_name, task.metric_params, seed,
                 [[render_plain(d), render_messages(d, "sys")] for d in docs]]
            )
    return out
"""


def load_render_all() -> Callable[[Path, Path], dict[str, Any]]:
    namespace: dict[str, Any] = {}
    exec(compile(RENDER_ALL, "<render_all>", "exec"), namespace)
    return namespace["render_all"]  # type: ignore[no-any-return]


def test_registry_load_and_every_selection_keep_the_global_random_state(tmp_path: Path) -> None:
    tasks, data = write_registry_fixture(tmp_path)
    render_all = load_render_all()
    random.seed(12345)
    state = random.getstate()
    first = render_all(tasks, data)
    assert random.getstate() == state
    random.seed(999)
    second = render_all(tasks, data)
    assert first == second
    assert len(first["tasks"]) == 3 * (1 + 5 + 5)


def test_output_is_independent_of_pythonhashseed(tmp_path: Path) -> None:
    tasks, data = write_registry_fixture(tmp_path)
    script = RENDER_ALL + textwrap.dedent(
        f"""
        random.seed(int(sys.argv[1]))
        print(json.dumps(render_all({str(tasks)!r}, {str(data)!r}), sort_keys=True))
        """
    )
    outputs = []
    for hash_seed, global_seed in (("1", "1"), ("4242", "77")):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        result = subprocess.run(
            [sys.executable, "-c", script, global_seed],
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    in_process = json.dumps(load_render_all()(tasks, data), sort_keys=True)
    assert outputs[0].strip() == in_process


JSON_FRAGMENTS = [
    '{"a": 1}', '{"a": [1', '2]}', '{"a": [{"b": 1}', '{"c": 2}]}', '{"x": 1}, {"y": 2}',
    '{"x": 1}],[{"y": 2}', "", "  ", '  {"a": 3}  ', '{"a": "\\u2028 \\u0085"}', "[1]",
    '{"a": 1}\u00a0', '{"a": 1, "a": 2}', '{"q": "x"} ', "{", "}", '"s"',
]  # fmt: skip
"""Line pieces: whole objects, objects spread over lines, two values on a line, blanks."""


def _reference_rows(lines: list[str]) -> list[Any] | None:
    """JSON Lines read line by line: each non-blank line one object, else None (refused)."""
    rows = []
    for line in lines:
        if not line.strip():
            continue
        try:
            value = json.loads(line, object_pairs_hook=_no_repeats)
        except ValueError:
            return None
        if not isinstance(value, dict):
            return None
        rows.append(value)
    return rows


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    row = dict(pairs)
    if len(row) != len(pairs):
        raise ValueError("repeated key")
    return row


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(JSON_FRAGMENTS), min_size=1, max_size=8),
    st.sampled_from([1, 12, 1 << 21]),
)
@known_case(['{"a": [{"b": 1}', '{"c": 2}]}', '{"x": 1}, {"y": 2}'], 1 << 21)
def test_json_lines_give_one_row_per_line_or_an_error(pieces: list[str], chunk: int) -> None:
    """Whatever the lines and wherever the chunks end, the reader's rows are the line-by-line
    reading's (one object per non-blank line, typed by column), or it refuses the file as that
    reading does."""
    from pytest_evaltasks.engine import local_files
    from pytest_evaltasks.errors import DatasetError

    text = "\n".join(pieces) + "\n"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.jsonl"
        path.write_text(text, encoding="utf-8")
        expected = _reference_rows(text.split("\n"))
        saved = local_files.CHUNK_CHARS
        local_files.CHUNK_CHARS = chunk
        try:
            if expected is None:
                with pytest.raises(DatasetError):
                    local_files.read_rows_file(path)
            else:
                typed = local_files.normalise_json_rows(expected)  # columns typed as a whole
                assert local_files.read_rows_file(path) == typed
        finally:
            local_files.CHUNK_CHARS = saved
