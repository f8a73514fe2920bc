"""The `[task]` section and the doc hashes see every change that matters to the version gate.

Each case builds one small project twice, in two directories (two "clones"): once as it is
(the control, whose recorded facts must be equal byte for byte), and once with one change that
alters what is sent or scored (the variant, whose recorded facts must differ). Nothing recorded
may hold a memory address, a private module name or an absolute path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_evaltasks import Registry
from pytest_evaltasks.engine.rendered import DocsRendered
from pytest_evaltasks.engine.run_settings import RunSettings
from pytest_evaltasks.snapshot.built import build_snapshot
from pytest_evaltasks.snapshot.facts import SnapshotFacts
from pytest_evaltasks.snapshot.gate import Outcome, judge

HELPERS = '''\
"""Never imported as a task module (the leading `_`); the task module imports it."""


def normalize(text, lang="en"):
    return text.lower() if lang == "en" else text.casefold()
'''

MODULE = '''\
import dataclasses
import functools
import os

from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

from ._helpers import normalize

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def exact(pred, gold):
    return float(normalize(pred) == normalize(gold))


def make_threshold(threshold):
    def passes(pred, gold):
        return exact(pred, gold) >= threshold

    return passes


class Slotted:
    __slots__ = ("threshold",)

    def __init__(self, threshold):
        self.threshold = threshold


class Private:
    def __init__(self, threshold):
        self.name = "private"
        self._threshold = threshold


class Normalizer:
    def __init__(self, lang):
        self.lang = lang


@dataclasses.dataclass
class Metric:
    metric_name: str
    sample_level_fn: object
    category: str = "GENERATIVE"
    normalize_pred: object = None


@dataclasses.dataclass
class JudgedTaskConfig:
    """A lighteval-style config subclass, duck-typed: one field we do not know."""

    name: str
    prompt_function: object
    hf_repo: str
    hf_subset: str
    metrics: list
    evaluation_splits: list
    few_shots_split: str
    version: int = 0
    hf_data_files: object = None
    solver: object = None
    judge_template: str = "Is {answer} right?"


def pick(record, key="q"):
    return record[key]


def prompt(line, task_name):
    return Doc(
        task_name=task_name,
        query="Q: " + line["q"] + "\\nA:",
        choices=[" a", " b"],
        gold_index=line["g"],
        specific=SPECIFIC,
        images=IMAGES,
    )


SPECIFIC = None
IMAGES = None
CONFIG_CLASS = LightevalTaskConfig
CONFIG = dict(
    name="t",
    prompt_function=prompt,
    hf_repo="o/d",
    hf_subset="s",
    metrics=[Metric("em", exact)],
    evaluation_splits=["test"],
    few_shots_split="train",
    version=0,
)
'''

TABLE = "\nTASKS_TABLE = [CONFIG_CLASS(**CONFIG)]\n"

IMAGE = b"\x89PNG\r\n\x1a\n fake image bytes"


def write_project(root: Path, setup: str = "", image: tuple[str, bytes] | None = None) -> Path:
    """A one-task project: `tasks/t.py` (MODULE, then `setup`), `tasks/_helpers.py`, rows under
    `data/o/d/s/`, and optionally an image file (path relative to the root, bytes)."""
    tasks = root / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / "_helpers.py").write_text(HELPERS, encoding="utf-8")
    (tasks / "t.py").write_text(MODULE + setup + TABLE, encoding="utf-8")
    data = root / "data" / "o" / "d" / "s"
    data.mkdir(parents=True, exist_ok=True)
    for split, count in (("test", 4), ("train", 3)):
        lines = [json.dumps({"q": f"{split} {i}", "g": i % 2}) for i in range(count)]
        (data / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if image is not None:
        where, content = image
        (root / where).parent.mkdir(parents=True, exist_ok=True)
        (root / where).write_bytes(content)
    return root


def facts_of(root: Path, spec: str = "t|1") -> SnapshotFacts:
    """The recorded facts of the project's task, built afresh (a new registry, a new import)."""
    registry = Registry([root / "tasks"], data_dir=root / "data")
    assert not registry.broken, [module.describe() for module in registry.broken]
    (task,) = registry.load(spec)
    return build_snapshot(DocsRendered.of(task, task.build()), RunSettings(), root=root).facts


def changed_keys(left: SnapshotFacts, right: SnapshotFacts) -> set[str]:
    """`[task]` keys whose value differs (or that only one side has)."""
    keys = set(left.task) | set(right.task)
    return {key for key in keys if left.task.get(key) != right.task.get(key)}


def assert_portable(facts: SnapshotFacts, *roots: Path) -> None:
    """No recorded `[task]` value holds an address, a private module name or a root path."""
    for key, value in facts.task.items():
        assert " at 0x" not in value, f"{key}: {value}"
        assert "_evaltasks_" not in value, f"{key}: {value}"
        for root in roots:
            assert str(root) not in value, f"{key}: {value}"


def metric(body: str) -> str:
    return f'CONFIG["metrics"] = [{body}]\n'


def field(name: str, value: str) -> str:
    return f"CONFIG[{name!r}] = {value}\n"


# Each case: (base setup, variant setup, the one `[task]` key that must change).
TASK_CASES = [
    pytest.param(
        metric('Metric("em", exact, normalize_pred=functools.partial(normalize, lang="fr"))'),
        metric('Metric("em", exact, normalize_pred=functools.partial(normalize, lang="en"))'),
        "metrics",
        id="metric-param-partial-keyword",
    ),
    pytest.param(
        metric(
            'Metrics.exact_match(sample_params={"normalize_pred": '
            'functools.partial(normalize, lang="fr")})'
        ),
        metric(
            'Metrics.exact_match(sample_params={"normalize_pred": '
            'functools.partial(normalize, lang="en")})'
        ),
        "metrics",
        id="metric-ref-param-partial-keyword",
    ),
    pytest.param(
        metric('Metric("em", make_threshold(0.5))'),
        metric('Metric("em", make_threshold(0.75))'),
        "metrics",
        id="closure-over-another-value",
    ),
    pytest.param(
        metric('Metric("em", Slotted(0.5))'),
        metric('Metric("em", Slotted(0.75))'),
        "metrics",
        id="slotted-object-threshold",
    ),
    pytest.param(
        metric('Metric("em", Private(0.5))'),
        metric('Metric("em", Private(0.75))'),
        "metrics",
        id="private-attribute-threshold",
    ),
    pytest.param(
        metric('Metric("em", exact, normalize_pred=Normalizer("fr"))'),
        metric('Metric("em", exact, normalize_pred=Normalizer("en"))'),
        "metrics",
        id="object-as-metric-param",
    ),
    *(
        pytest.param(
            field(name, 'functools.partial(pick, key="q")'),
            field(name, 'functools.partial(pick, key="g")'),
            name,
            id=f"{name}-changed",
        )
        for name in ("solver", "scorer", "sample_fields", "filter", "sample_to_fewshot")
    ),
    *(
        pytest.param("", field(name, "[pick]"), name, id=f"{name}-set")
        for name in ("solver", "scorer", "sample_fields", "filter", "sample_to_fewshot")
    ),
    pytest.param(
        "def to_sample(record):\n    return {'input': record['q']}\n\n"
        + field("sample_fields", "to_sample"),
        "def to_sample(record):\n    return {'input': record['q'].strip()}\n\n"
        + field("sample_fields", "to_sample"),
        "sample_fields",
        id="sample_fields-function-body",
    ),
    pytest.param("", field("truncate_fewshots", "True"), "truncate_fewshots", id="truncate"),
    pytest.param(
        "CONFIG_CLASS = JudgedTaskConfig\n",
        "CONFIG_CLASS = JudgedTaskConfig\n" + field("judge_template", '"Is {answer} correct?"'),
        "config.judge_template",
        id="config-subclass-extra-field",
    ),
]


@pytest.mark.parametrize(("base", "variant", "key"), TASK_CASES)
def test_a_change_is_recorded_in_task_fields(
    tmp_path: Path, base: str, variant: str, key: str
) -> None:
    original = facts_of(write_project(tmp_path / "home" / "alice" / "a", base))
    clone = facts_of(write_project(tmp_path / "ci" / "b", base))
    changed = facts_of(write_project(tmp_path / "c", variant))

    assert clone.task == original.task  # the control: same project at another path
    assert clone.hash_text == original.hash_text
    assert changed_keys(original, changed) == {key}
    assert changed.hash_text == original.hash_text  # scoring only: no prompt changed
    for facts in (original, changed):
        assert_portable(facts, tmp_path)


def test_an_unknown_config_field_is_recorded_by_name(tmp_path: Path) -> None:
    facts = facts_of(write_project(tmp_path, "CONFIG_CLASS = JudgedTaskConfig\n"))
    assert facts.task["config.judge_template"] == '"Is {answer} right?"'


def test_specific_int_key_is_not_its_string_key(tmp_path: Path) -> None:
    original = facts_of(write_project(tmp_path / "a", 'SPECIFIC = {1: "gold"}\n'))
    clone = facts_of(write_project(tmp_path / "b", 'SPECIFIC = {1: "gold"}\n'))
    changed = facts_of(write_project(tmp_path / "c", 'SPECIFIC = {"1": "gold"}\n'))

    assert clone.hash_text == original.hash_text
    assert changed.task == original.task
    assert set(changed.doc_hashes) == set(original.doc_hashes)
    assert all(
        changed.doc_hashes[label] != original.doc_hashes[label] for label in changed.doc_hashes
    )


def test_an_image_path_is_hashed_by_the_file_bytes(tmp_path: Path) -> None:
    def setup(where: str) -> str:
        return f"IMAGES = [os.path.join(ROOT, *{where.split('/')!r})]\n"

    first = write_project(tmp_path / "a", setup("img/cat.png"), ("img/cat.png", IMAGE))
    moved = write_project(tmp_path / "b", setup("pics/dog.png"), ("pics/dog.png", IMAGE))
    original = facts_of(first)

    assert facts_of(moved).hash_text == original.hash_text  # same bytes, another path

    (first / "img" / "cat.png").write_bytes(IMAGE + b"!")  # same path, other bytes
    edited = facts_of(first)
    assert edited.task == original.task
    assert all(edited.doc_hashes[label] != digest for label, digest in original.doc_hashes.items())

    (first / "img" / "cat.png").write_bytes(IMAGE)  # back as it was: the same hashes again
    assert facts_of(first).hash_text == original.hash_text


def test_data_files_built_from_file_are_relative_to_the_root(tmp_path: Path) -> None:
    setup = field(
        "hf_data_files",
        '{split: os.path.join(ROOT, "data", "o", "d", "s", split + ".jsonl") '
        'for split in ("test", "train")}',
    )
    original = facts_of(write_project(tmp_path / "home" / "alice" / "a", setup))
    clone = facts_of(write_project(tmp_path / "b", setup))

    expected = {"test": "data/o/d/s/test.jsonl", "train": "data/o/d/s/train.jsonl"}
    assert json.loads(original.task["data_files"]) == expected
    assert clone.task == original.task
    assert clone.hash_text == original.hash_text


def test_a_module_function_as_sample_level_fn_has_one_identity_in_two_clones(
    tmp_path: Path,
) -> None:
    setup = metric('Metric("em", exact)')
    original = facts_of(write_project(tmp_path / "home" / "alice" / "a", setup))
    clone = facts_of(write_project(tmp_path / "b", setup))
    assert clone.task["metrics"] == original.task["metrics"]
    assert original.task["metrics"].startswith("Metric [em; GENERATIVE] #")

    # The same names and constants: only the function's bytecode tells the two apart.
    edited = MODULE.replace(
        "normalize(pred) == normalize(gold)", "normalize(pred) != normalize(gold)"
    )
    assert edited != MODULE
    changed_root = write_project(tmp_path / "c", setup)
    (changed_root / "tasks" / "t.py").write_text(edited + setup + TABLE, encoding="utf-8")
    assert facts_of(changed_root).task["metrics"] != original.task["metrics"]


RICH = (
    "CONFIG_CLASS = JudgedTaskConfig\n"
    'SPECIFIC = {1: "gold"}\n'
    'IMAGES = [os.path.join(ROOT, "img", "cat.png")]\n'
    + metric(
        'Metric("em", exact, normalize_pred=functools.partial(normalize, lang="fr")), '
        'Metric("closure", make_threshold(0.5), normalize_pred=Normalizer("fr")), '
        'Metric("slots", Slotted(0.5)), Metric("private", Private(0.5)), '
        'Metrics.exact_match(sample_params={"normalize_pred": make_threshold(0.5)})'
    )
    + field(
        "hf_data_files",
        '{split: os.path.join(ROOT, "data", "o", "d", "s", split + ".jsonl") '
        'for split in ("test", "train")}',
    )
    + field("solver", '[functools.partial(pick, key="q"), make_threshold(0.5)]')
    + field("judge_template", "Normalizer('fr')")
)


def test_nothing_recorded_holds_an_address_a_private_name_or_a_path(tmp_path: Path) -> None:
    root = write_project(tmp_path / "home" / "alice" / "a", RICH, ("img/cat.png", IMAGE))
    facts = facts_of(root)
    assert {"metrics", "solver", "data_files", "config.judge_template"} <= set(facts.task)
    assert_portable(facts, tmp_path, root)
    clone = facts_of(write_project(tmp_path / "b", RICH, ("img/cat.png", IMAGE)))
    assert clone.task == facts.task
    assert clone.hash_text == facts.hash_text


def test_a_summarised_value_is_named_by_what_it_is(tmp_path: Path) -> None:
    setup = field("solver", 'functools.partial(pick, key="q")') + field("scorer", "pick")
    facts = facts_of(write_project(tmp_path, setup))
    assert facts.task["scorer"].startswith("tasks/t.py:pick #")
    assert facts.task["solver"].startswith("tasks/t.py:pick #")


def test_an_object_as_a_metric_ref_parameter_is_recorded_without_its_address(
    tmp_path: Path,
) -> None:
    setup = metric('Metrics.exact_match(sample_params={"normalizer": Normalizer("fr")})')
    original = facts_of(write_project(tmp_path / "a", setup))
    clone = facts_of(write_project(tmp_path / "b", setup))
    assert_portable(original, tmp_path)
    assert clone.task == original.task


def test_the_gate_refuses_a_partial_keyword_change_at_the_same_version(tmp_path: Path) -> None:
    def setup(lang: str) -> str:
        return metric(
            f'Metric("em", exact, normalize_pred=functools.partial(normalize, lang="{lang}"))'
        )

    old = facts_of(write_project(tmp_path / "a", setup("fr")))
    same = facts_of(write_project(tmp_path / "b", setup("fr")))
    new = facts_of(write_project(tmp_path / "c", setup("en")))

    assert judge(old, same, update=False).outcome is Outcome.UNCHANGED
    verdict = judge(old, new, update=False)
    assert verdict.outcome is Outcome.UNVERSIONED
    assert not verdict.passes
    assert [change.partition(":")[0] for change in verdict.fields] == ["metrics"]
    assert "its version is still 0" in verdict.headline
    refused = judge(old, new, update=True)
    assert refused.outcome is Outcome.UNVERSIONED
    assert not refused.record
