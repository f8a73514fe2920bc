"""Unit tests for the pure snapshot layer: file layout, parsing, canonical hashing, names."""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_evaltasks import Doc, Registry
from pytest_evaltasks.engine.line_text import quote_text as quoted
from pytest_evaltasks.engine.rendered import DocsRendered
from pytest_evaltasks.engine.run_settings import RunSettings
from pytest_evaltasks.engine.task import FewShotFromEvalWarning
from pytest_evaltasks.snapshot.built import build_snapshot
from pytest_evaltasks.snapshot.canonical import UnencodableValue, canonical
from pytest_evaltasks.snapshot.facts import FORMAT_VERSION
from pytest_evaltasks.snapshot.fingerprint import DocHasher
from pytest_evaltasks.snapshot.gate import Outcome, judge
from pytest_evaltasks.snapshot.parse import (
    SnapshotFileError,
    _in_row_number_order,
    normalise,
    parse_snapshot,
    shown_blocks,
)
from pytest_evaltasks.snapshot.storage import snapshot_filename

TASK = """
from pytest_evaltasks import Doc, LightevalTaskConfig

def prompt(line, task_name):
    return Doc(task_name=task_name, query=PREFIX + line["q"] + "\\nA:", choices=[" x", " y"],
               gold_index=line["g"], instruction=INSTRUCTION)

PREFIX = "Q: "
INSTRUCTION = None
TASKS_TABLE = [LightevalTaskConfig(name="t", prompt_function=prompt, hf_repo="o/d",
    hf_subset="s", metrics=["m"], evaluation_splits=["test"], few_shots_split="train",
    stop_sequence=["\\n"], version=VERSION, few_shots_select=SELECT)]
VERSION = 0
SELECT = None
"""


def make_project(tmp_path: Path, rows: int = 12, **overrides: object) -> Registry:
    """A one-task project; `overrides` replace module constants such as PREFIX or VERSION."""
    source = TASK
    for name, value in overrides.items():
        source += f"\n{name} = {value!r}\n"
    source = source.replace("version=VERSION", f"version={overrides.get('VERSION', 0)!r}")
    source = source.replace(
        "few_shots_select=SELECT", f"few_shots_select={overrides.get('SELECT')!r}"
    )
    (tmp_path / "tasks").mkdir(exist_ok=True)
    (tmp_path / "tasks" / "t.py").write_text(source, encoding="utf-8")
    data = tmp_path / "data" / "o" / "d" / "s"
    data.mkdir(parents=True, exist_ok=True)
    for split, count in (("test", rows), ("train", 6)):
        lines = [json.dumps({"q": f"{split} {i}", "g": i % 2}) for i in range(count)]
        (data / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Registry([tmp_path / "tasks"], data_dir=tmp_path / "data")


def snapshot_of(registry: Registry, spec: str = "t|3", settings: RunSettings | None = None):
    """Build the snapshot of the one requested task."""
    (task,) = registry.load(spec)
    settings = settings or RunSettings()
    return build_snapshot(DocsRendered.of(task, task.build(settings.max_samples)), settings)


def doc_digest(doc: Doc) -> str:
    """One doc's hash, on its own."""
    return DocHasher().digest(doc)


def test_parse_reads_back_what_build_wrote(tmp_path: Path) -> None:
    built = snapshot_of(make_project(tmp_path))
    parsed = parse_snapshot(built.text(3))
    assert parsed.format_version == FORMAT_VERSION
    assert parsed.task == built.facts.task
    assert parsed.settings == built.facts.settings
    assert parsed.doc_hashes == built.facts.doc_hashes
    assert parsed.docs_shown == 3
    assert list(parsed.doc_hashes) == [str(i) for i in range(12)]  # sorted numerically
    assert parsed.task["name"] == "t|3"
    assert parsed.task["stop_sequences"] == '["\\n"]'
    assert parsed.task["metrics"] == "m"


@pytest.mark.parametrize(
    "mangle",
    [
        pytest.param(lambda text: text.replace("\n", "\r\n"), id="crlf"),
        pytest.param(lambda text: text.rstrip("\n"), id="no-final-newline"),
        pytest.param(lambda text: text.replace("\n", "  \n"), id="trailing-spaces"),
        pytest.param(lambda text: text.replace("\n", " \r\n").rstrip(), id="all-of-them"),
    ],
)
def test_parse_is_tolerant_of_line_endings_and_trailing_spaces(tmp_path: Path, mangle: Any) -> None:
    built = snapshot_of(make_project(tmp_path, PREFIX="Q:  "))
    text = built.text(3)
    parsed = parse_snapshot(mangle(text))
    assert parsed.task == built.facts.task
    assert parsed.version == "0"
    assert parsed.doc_hashes == built.facts.doc_hashes
    assert normalise(mangle(text)) == normalise(text)


def test_trailing_spaces_of_a_prompt_are_visible_so_no_tool_can_strip_them(tmp_path: Path) -> None:
    text = snapshot_of(make_project(tmp_path, PREFIX="Q: "), "t|0").text(1)
    assert "| Q: test 7\n| A:\n" in text
    spaced = snapshot_of(make_project(tmp_path, PREFIX="Q:  "), "t|0").text(1)
    assert "| Q:  test 7" in spaced  # inner spaces stay as they are
    trailing = quoted("Answer: \n  indented  ")
    assert trailing == ["| Answer:\u2420", "|   indented\u2420\u2420"]
    assert all(line == line.rstrip() for line in trailing)


def test_conflict_markers_are_a_clear_error() -> None:
    text = "# pytest-evaltasks snapshot, format 2\n<<<<<<< HEAD\n[task]\n=======\n>>>>>>> b\n"
    with pytest.raises(SnapshotFileError, match=r"conflict markers .line 2.*take either side"):
        parse_snapshot(text)
    with pytest.raises(SnapshotFileError) as raised:
        parse_snapshot(text)
    assert "delete" not in str(raised.value)  # deleting and re-recording launders the record


def test_a_snapshot_without_its_task_section_is_an_error_not_an_empty_version() -> None:
    with pytest.raises(SnapshotFileError, match=r"edited by hand.*missing or out of order.*task"):
        parse_snapshot("# pytest-evaltasks snapshot, format 2\n\n[settings]\nx: y\n")


def test_shown_docs_quote_every_line_and_stop_at_docs_shown(tmp_path: Path) -> None:
    text = snapshot_of(make_project(tmp_path)).text(2)
    assert text.count("[doc ") == 3  # the hashes section plus two docs
    assert "--- prompt (plain text) ---\n| Q: train" in text
    assert "\n|\n| Q: train" in text  # the blank line between blocks stays visible
    assert list(shown_blocks(text)) == [
        label
        for label, _ in snapshot_of(make_project(tmp_path)).rendered.docs[:2]  # type: ignore[attr-defined]
    ]


def test_parse_rejects_text_that_is_not_a_snapshot() -> None:
    with pytest.raises(SnapshotFileError, match="not a pytest-evaltasks snapshot"):
        parse_snapshot("hello\n")


def test_file_names_are_safe_and_unambiguous() -> None:
    names = {snapshot_filename(key) for key in ("mmlu|5", "mmlu5", "MMLU|5", "a/../b|0", "x y|0")}
    assert len(names) == 5
    for name in names:
        assert "/" not in name and ".." not in name.replace("--", "")
        assert name.endswith(".txt")


def test_doc_hashes_do_not_depend_on_run_settings(tmp_path: Path) -> None:
    registry = make_project(tmp_path)
    plain = snapshot_of(registry).facts.doc_hashes
    system = snapshot_of(registry, settings=RunSettings(system_prompt="Be brief.")).facts
    chat = snapshot_of(registry, settings=RunSettings(chat_template="messages")).facts
    assert system.doc_hashes == plain == chat.doc_hashes
    assert system.settings != chat.settings


def test_a_prompt_edit_changes_exactly_the_edited_docs(tmp_path: Path) -> None:
    before = snapshot_of(make_project(tmp_path), "t|0").facts
    after = snapshot_of(make_project(tmp_path, PREFIX="Question: "), "t|0").facts
    verdict = judge(before, after, update=False)
    assert verdict.outcome is Outcome.UNVERSIONED
    assert sorted(verdict.docs.changed, key=int) == [str(i) for i in range(12)]


BASE = Doc(query="Q: x\nA:", choices=[" a", " b"], gold_index=1)
FIELD_CHANGES = [
    ("query", "Q: y\nA:"),
    ("choices", [" a", " c"]),
    ("gold_index", 0),
    ("gold_index", [1]),
    ("instruction", "Answer.\n\n"),
    ("specific", {"instructions_id_list": ["punctuation:no_comma"]}),
    ("unconditioned_query", "A:"),
    ("original_query", "x"),
    ("images", [b"\x89PNG..."]),
    ("sampling_methods", ["GENERATIVE"]),
    ("generation_size", 5),
    ("stop_sequences", ["\n"]),
    ("num_samples", 2),
    ("use_logits", True),
    ("generation_grammar", {"type": "json", "value": {}}),
    ("fewshot_sorting_class", "b"),
]


@pytest.mark.parametrize(("field", "value"), FIELD_CHANGES, ids=[f for f, _ in FIELD_CHANGES])
def test_every_doc_field_a_model_or_metric_reads_changes_the_hash(field: str, value: Any) -> None:
    changed = dataclasses.replace(BASE, **{field: value})
    assert doc_digest(changed) != doc_digest(BASE)


def test_an_emptied_specific_field_changes_the_hash() -> None:
    full = dataclasses.replace(BASE, specific={"instructions_id_list": ["a"], "kwargs": [{}]})
    empty = dataclasses.replace(BASE, specific={"instructions_id_list": [], "kwargs": [{}]})
    assert doc_digest(full) != doc_digest(empty)


def test_images_are_hashed_by_their_bytes() -> None:
    one = dataclasses.replace(BASE, images=[bytearray(b"abc")])
    same = dataclasses.replace(BASE, images=[b"abc"])
    other = dataclasses.replace(BASE, images=[b"abd"])
    assert doc_digest(one) == doc_digest(same) != doc_digest(other)


def test_examples_are_covered_by_id_and_content() -> None:
    example = Doc(query="Q: e\nA:", choices=[" a"], gold_index=0, id="4")
    moved = dataclasses.replace(example, id="5")
    unstripped = dataclasses.replace(example, choices=["a"])  # same plain prompt, other chat
    digests = {
        doc_digest(dataclasses.replace(BASE, fewshot_samples=[shot]))
        for shot in (example, moved, unstripped)
    }
    assert len(digests) == 3


@pytest.mark.parametrize(
    ("left", "right"),
    [
        pytest.param({"choices": [" a", " b"]}, {"choices": (" a", " b")}, id="tuple-is-a-list"),
        pytest.param(
            {"specific": {"a": 1, "b": [2, 3]}}, {"specific": {"b": (2, 3), "a": 1}}, id="key-order"
        ),
    ],
)
def test_canonical_encoding_ignores_container_type_and_key_order(
    left: dict[str, Any], right: dict[str, Any]
) -> None:
    assert doc_digest(dataclasses.replace(BASE, **left)) == doc_digest(
        dataclasses.replace(BASE, **right)
    )


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(st.lists(JSON_VALUES, max_size=6))
def test_canonical_encoding_is_json_with_sorted_keys_and_no_spaces(fields: list[Any]) -> None:
    names = tuple(f"f{i}" for i in range(len(fields)))
    expected = json.dumps(fields, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    assert canonical(fields, names) == expected


SHARED_EXAMPLES = [Doc(query="Q: e\nA:", choices=[" a"], gold_index=0, id="7")]
SHARED_STOPS = ["\n"]
SHARED_METHODS = ["LOGPROBS"]


@st.composite
def shared_doc(draw: st.DrawFn) -> Doc:
    """A doc made of a few shared objects, as a task's docs are, with equal values that are
    not the same object (or not the same type) mixed in."""
    return Doc(
        query=draw(st.sampled_from(["Q: x\nA:", "Answer. Q: x\nA:"])),
        choices=[" a", " b"],
        gold_index=draw(st.sampled_from([0, 1, True])),
        instruction=draw(st.sampled_from([None, "Answer. ", "".join(["Answer", ". "])])),
        fewshot_samples=draw(
            st.sampled_from([SHARED_EXAMPLES, list(SHARED_EXAMPLES), [], SHARED_EXAMPLES * 2])
        ),
        sampling_methods=draw(st.sampled_from([SHARED_METHODS, ["LOGPROBS"], ["GENERATIVE"]])),
        stop_sequences=draw(st.sampled_from([SHARED_STOPS, ["\n"], None, ["\n\n"]])),
        generation_size=draw(st.sampled_from([None, 1, True, 1.0, 5])),
        use_logits=draw(st.sampled_from([False, True, 0])),
    )


@given(st.lists(shared_doc(), min_size=1, max_size=8))
def test_a_hasher_shared_by_many_docs_hashes_each_as_if_alone(docs: list[Doc]) -> None:
    hasher = DocHasher()
    assert [hasher.digest(doc) for doc in docs] == [doc_digest(doc) for doc in docs]


@pytest.mark.parametrize(
    ("field", "values"),
    [
        pytest.param("use_logits", [False, 0], id="false-and-0"),
        pytest.param("generation_size", [1, True, 1.0], id="1-true-and-1.0"),
        pytest.param("generation_size", [0.0, -0.0], id="0.0-and-minus-0.0"),
        pytest.param("num_samples", [1, True], id="1-and-true"),
        pytest.param(
            "generation_grammar", [{"max": 1}, {"max": True}, {"max": 1.0}], id="equal-mappings"
        ),
    ],
)
def test_equal_run_values_of_other_types_or_objects_are_hashed_as_their_own(
    field: str, values: list[Any]
) -> None:
    shared = {"sampling_methods": SHARED_METHODS, "stop_sequences": SHARED_STOPS}
    docs = [dataclasses.replace(BASE, **{**shared, field: value}) for value in values]
    hasher = DocHasher()
    assert [hasher.digest(doc) for doc in docs + docs[::-1]] == [
        doc_digest(doc) for doc in docs + docs[::-1]
    ]


def test_canonical_encoding_keeps_bool_int_and_float_apart() -> None:
    encoded = {
        canonical([value], ("specific",)) for value in (True, 1, 1.0, "1", None, [1], {"1": 1})
    }
    assert len(encoded) == 7


def test_numpy_values_encode_as_python_values() -> None:
    numpy = pytest.importorskip("numpy")
    plain = dataclasses.replace(BASE, specific={"score": 2, "weights": [0.5, 1.5], "ok": True})
    as_numpy = dataclasses.replace(
        BASE,
        specific={
            "score": numpy.int64(2),
            "weights": numpy.array([0.5, 1.5]),
            "ok": numpy.bool_(True),
        },
    )
    assert doc_digest(plain) == doc_digest(as_numpy)


@pytest.mark.parametrize(
    ("value", "path"),
    [
        pytest.param({"ids": {1, 2}}, "specific['ids']", id="set"),
        pytest.param({"handle": object()}, "specific['handle']", id="object"),
    ],
)
def test_values_without_a_canonical_form_are_errors_naming_field_and_type(
    value: Any, path: str
) -> None:
    with pytest.raises(UnencodableValue) as info:
        doc_digest(dataclasses.replace(BASE, specific=value))
    assert path in str(info.value)
    assert "has no canonical encoding" in str(info.value)


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def test_mapping_keys_keep_their_type_and_never_their_order() -> None:
    def encode(specific: dict[Any, Any]) -> str:
        return doc_digest(Doc(query="q", choices=["a"], gold_index=0, specific=specific))

    assert encode({1: "gold"}) != encode({"1": "gold"})
    assert encode({1: "gold", "x": 2}) == encode({"x": 2, 1: "gold"})
    assert encode({True: "gold"}) != encode({1: "gold"})
    assert encode({(1, 2): "x"}) != encode({"1,2": "x"})


def test_a_field_nested_thousands_deep_is_a_named_error_not_a_recursion_error() -> None:
    doc = Doc(query="q", choices=["a"], gold_index=0, specific={"k": _nested(3000)})
    with pytest.raises(UnencodableValue, match=r"specific.*nested more than"):
        doc_digest(doc)


def test_docs_are_labelled_by_split_when_there_are_several(tmp_path: Path) -> None:
    registry = make_project(tmp_path)
    config = registry.configs["t"]
    config.evaluation_splits = ["test", "train"]
    (task,) = registry.load("t|0")
    labels = [label for label, _ in task.labelled_docs()]
    assert len(labels) == len(set(labels)) == 18
    assert {label.split("/")[0] for label in labels} == {"test", "train"}


def test_lighteval_style_none_subset_and_splits_are_accepted(tmp_path: Path) -> None:
    """lighteval accepts `hf_subset=None` (default config) and `hf_avail_splits=None`."""
    registry = make_project(tmp_path)
    config = registry.configs["t"]
    config.hf_avail_splits = None
    config.few_shots_split = None
    config.hf_subset = None
    data = tmp_path / "data" / "o" / "d"
    (data / "s").rename(data / "default")
    (task,) = registry.load("t|1")
    assert task.fewshot_split is None  # no splits listed: the pool is the evaluation split
    with pytest.warns(FewShotFromEvalWarning, match="evaluation split"):
        docs = task.get_docs()
    assert len(docs) == 12
    assert all(len(doc.fewshot_samples) == 1 for doc in docs)
    assert all(doc.fewshot_samples[0].query != doc.query for doc in docs)


@pytest.mark.parametrize(
    ("statement", "names"),
    [
        (
            "from lighteval.tasks.requests import Doc",
            "from pytest_evaltasks import Doc, SamplingMethod",
        ),
        (
            "from lighteval.tasks.lighteval_task import LightevalTaskConfig",
            "from pytest_evaltasks import LightevalTaskConfig",
        ),
        ("from lighteval.metrics.metrics import Metrics", "from pytest_evaltasks import Metrics"),
    ],
)
def test_a_task_file_still_importing_lighteval_gets_a_porting_hint(
    tmp_path: Path, statement: str, names: str
) -> None:
    """lighteval is not installed in the test environment: the broken module says what to do."""
    if importlib.util.find_spec("lighteval") is not None:
        pytest.skip("lighteval is installed here")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "old.py").write_text(f"{statement}\nTASKS_TABLE = []\n", encoding="utf-8")
    registry = Registry([tmp_path / "tasks"])
    (broken,) = registry.broken
    assert "lighteval is not installed" in broken.error
    assert names in broken.error


@pytest.mark.parametrize(
    "module",
    [
        "lighteval.tasks.templates.multichoice",
        "lighteval.metrics.normalizations",
        "lighteval.metrics.dynamic_metrics",
        "lighteval.utils.language",
    ],
)
def test_the_porting_hint_names_a_lighteval_submodule_we_do_not_provide(
    tmp_path: Path, module: str
) -> None:
    if importlib.util.find_spec("lighteval") is not None:
        pytest.skip("lighteval is installed here")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "old.py").write_text(
        f"from pytest_evaltasks import Doc\nfrom {module} import something\n", encoding="utf-8"
    )
    (broken,) = Registry([tmp_path / "tasks"]).broken
    assert f"needs lighteval's {module}, which pytest-evaltasks does not provide" in broken.error
    assert "pip install lighteval==0.13.0" in broken.error
    assert "needs only pytest_evaltasks" not in broken.error


@given(st.lists(st.integers(min_value=0, max_value=30), max_size=12))
def test_hash_lines_are_taken_as_row_ordered_only_when_numbers_strictly_rise(
    numbers: list[int],
) -> None:
    text = "".join(f"{number} {'0' * 16}\n" for number in numbers)
    rising = all(a < b for a, b in itertools.pairwise(numbers))
    assert _in_row_number_order(text) is rising


@given(st.lists(st.tuples(st.text(min_size=1), st.text()), max_size=4))
def test_a_units_shown_lines_survive_a_reader_that_strips_trailing_spaces(
    shown: list[tuple[str, str]],
) -> None:
    """Another harness's doc shows values that may be empty or end in spaces (an lm-eval or
    Inspect target of ""): no shown line ends in whitespace, so the text a run lays out is the
    text a later run reads back (else it would find the snapshot edited)."""
    from pytest_evaltasks.engine.rendered import RenderedUnit
    from pytest_evaltasks.snapshot.parse import recorded_shown_text
    from pytest_evaltasks.snapshot.units import unit_block

    block = unit_block(0, 1, RenderedUnit("a", 0, {}, [*shown, ("target", "")]))
    assert "\ntarget:\n" in block
    assert recorded_shown_text(f"\n{block}\n") == f"\n{block}\n"
