"""Checks of the bundled task modules under ``tasks/``: names, configs, data and prompts.

Every module is imported by file path, as the registry does. The prompt function of every task
runs over every row of its local (synthetic) data files. Tests marked ``realdata`` also run the
prompt functions on real benchmark rows from ``../shared/realdata`` (or
``$EVALTASKS_SHARED_DIR/realdata``) and check properties that follow from the prompt format;
they are skipped when that directory is absent.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from string import ascii_uppercase
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pytest_evaltasks.engine.config import LightevalTaskConfig  # noqa: E402
from pytest_evaltasks.engine.doc import Doc  # noqa: E402

TASKS_DIR = ROOT / "tasks"
DATA_DIR = TASKS_DIR / "data"

MMLU_SUBJECTS = [
    "abstract_algebra",
    "anatomy",
    "astronomy",
    "business_ethics",
    "clinical_knowledge",
    "college_biology",
    "college_chemistry",
    "college_computer_science",
    "college_mathematics",
    "college_medicine",
    "college_physics",
    "computer_security",
    "conceptual_physics",
    "econometrics",
    "electrical_engineering",
    "elementary_mathematics",
    "formal_logic",
    "global_facts",
    "high_school_biology",
    "high_school_chemistry",
    "high_school_computer_science",
    "high_school_european_history",
    "high_school_geography",
    "high_school_government_and_politics",
    "high_school_macroeconomics",
    "high_school_mathematics",
    "high_school_microeconomics",
    "high_school_physics",
    "high_school_psychology",
    "high_school_statistics",
    "high_school_us_history",
    "high_school_world_history",
    "human_aging",
    "human_sexuality",
    "international_law",
    "jurisprudence",
    "logical_fallacies",
    "machine_learning",
    "management",
    "marketing",
    "medical_genetics",
    "miscellaneous",
    "moral_disputes",
    "moral_scenarios",
    "nutrition",
    "philosophy",
    "prehistory",
    "professional_accounting",
    "professional_law",
    "professional_medicine",
    "professional_psychology",
    "public_relations",
    "security_studies",
    "sociology",
    "us_foreign_policy",
    "virology",
    "world_religions",
]

BBH_SUBTASKS = [
    "causal_judgment",
    "date_understanding",
    "logical_deduction_three_objects",
    "navigate",
    "sports_understanding",
    "temporal_sequences",
]

EXPECTED_NAMES: dict[str, list[str]] = {
    "mmlu.py": [f"mmlu:{subject}" for subject in MMLU_SUBJECTS],
    "gsm8k.py": ["gsm8k"],
    "arc.py": ["arc:challenge", "arc:easy"],
    "hellaswag.py": ["hellaswag"],
    "truthfulqa.py": ["truthfulqa:mc"],
    "winogrande.py": ["winogrande"],
    "boolq.py": ["boolq"],
    "piqa.py": ["piqa"],
    "openbookqa.py": ["openbookqa"],
    "bigbench_hard.py": [f"bigbench_hard:{name}" for name in BBH_SUBTASKS],
    "ifeval/main.py": ["ifeval"],
}
"""Every bundled task module (path under ``tasks/``) and the task names it must register."""

SELECTION_METHODS = {
    "balanced",
    "random",
    "sequential",
    "random_sampling_from_train",
    "random_sampling",
}

UNLABELED_SPLITS = {
    ("ybisk/piqa", "test"),
    ("allenai/winogrande", "test"),
    ("Rowan/hellaswag", "test"),
}
"""Splits whose rows carry no answer, so gold_index is -1 (as in lighteval)."""

Check = Callable[[Any], bool]


def _str(value: Any) -> bool:
    return isinstance(value, str)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _opt_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _choices_struct(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and set(value) == {"text", "label"}
        and _str_list(value["text"])
        and _str_list(value["label"])
        and len(value["text"]) == len(value["label"])
    )


def _targets(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and set(value) == {"choices", "labels"}
        and _str_list(value["choices"])
        and all(_int(label) for label in value["labels"])
        and len(value["choices"]) == len(value["labels"])
    )


def _contrast(value: Any) -> bool:
    return value is None or (
        isinstance(value, dict)
        and set(value) == {"passage", "question"}
        and _str_list(value["passage"])
        and _str_list(value["question"])
    )


def _kwargs_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


SCHEMAS: dict[str, dict[str, Check]] = {
    "lighteval/mmlu": {"question": _str, "subject": _str, "choices": _str_list, "answer": _int},
    "openai/gsm8k": {"question": _str, "answer": _str},
    "allenai/ai2_arc": {
        "id": _str,
        "question": _str,
        "choices": _choices_struct,
        "answerKey": _str,
    },
    "Rowan/hellaswag": {
        "ind": _int,
        "activity_label": _str,
        "ctx_a": _str,
        "ctx_b": _str,
        "ctx": _str,
        "endings": _str_list,
        "source_id": _str,
        "split": _str,
        "split_type": _str,
        "label": _str,
    },
    "truthfulqa/truthful_qa": {"question": _str, "mc1_targets": _targets, "mc2_targets": _targets},
    "allenai/winogrande": {"sentence": _str, "option1": _str, "option2": _str, "answer": _str},
    "lighteval/boolq_helm": {
        "passage": _str,
        "question": _str,
        "answer": _str,
        "contrast_inputs": _contrast,
    },
    "ybisk/piqa": {"goal": _str, "sol1": _str, "sol2": _str, "label": _int},
    "allenai/openbookqa": {
        "id": _str,
        "question_stem": _str,
        "choices": _choices_struct,
        "answerKey": _str,
    },
    "lighteval/bbh": {
        "input": _str,
        "choices": _str_list,
        "target_idx": _int,
        "task_prefix": _opt_str,
        "example_input_prefix": _opt_str,
        "choice_prefix": _opt_str,
        "example_output_prefix": _opt_str,
    },
    "google/IFEval": {
        "key": _int,
        "prompt": _str,
        "instruction_id_list": _str_list,
        "kwargs": _kwargs_list,
    },
}
"""Column names and JSON types of each dataset, as in the real Hub datasets."""


# --- helpers ----------------------------------------------------------------------------------


@functools.cache
def load_task_module(relative: str) -> ModuleType:
    """Import a task module by file path, as the registry does (not as a package)."""
    path = TASKS_DIR / relative
    name = "bundled_task_" + re.sub(r"\W", "_", relative.removesuffix(".py"))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def all_configs() -> list[tuple[str, LightevalTaskConfig]]:
    """(module path, config) for every bundled task."""
    return [
        (relative, config)
        for relative in EXPECTED_NAMES
        for config in load_task_module(relative).TASKS_TABLE
    ]


def dataset_dir(config: LightevalTaskConfig, root: Path = DATA_DIR) -> Path:
    """Where a task's rows live: ``<root>/<hf_repo>/<hf_subset or default>``."""
    return root / config.hf_repo / (config.hf_subset or "default")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON Lines file."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def few_shot_split(config: LightevalTaskConfig) -> str | None:
    """The few-shot split the harness uses; None means the evaluation split is the pool."""
    if config.few_shots_split:
        return config.few_shots_split
    candidates = [s for s in config.hf_avail_splits if s not in config.evaluation_splits]
    for wanted in ("train", "dev", "valid", "default"):
        for split in candidates:
            if wanted in split:
                return split
    return None


def run_prompt(
    config: LightevalTaskConfig, row: dict[str, Any], index: int, few_shots: bool
) -> Doc | None:
    """Call the task's prompt function the way the harness does."""
    line = {**row, "__few_shots": few_shots, "__index": index}
    result: Doc | None = config.prompt_function(line, config.name)
    return result


def docs_of_split(config: LightevalTaskConfig, split: str, few_shots: bool) -> list[Doc]:
    """Every Doc the prompt function makes from one local split (dropped rows left out)."""
    rows = read_jsonl(dataset_dir(config) / f"{split}.jsonl")
    docs = [run_prompt(config, row, index, few_shots) for index, row in enumerate(rows)]
    return [doc for doc in docs if doc is not None]


def check_doc(doc: Doc, config: LightevalTaskConfig, allow_unlabeled: bool) -> None:
    """Sanity of one Doc's fields."""
    assert isinstance(doc, Doc)
    assert doc.task_name == config.name
    assert isinstance(doc.query, str) and doc.query.strip()
    assert isinstance(doc.choices, list) and doc.choices
    assert all(isinstance(choice, str) for choice in doc.choices)
    golds = doc.gold_index if isinstance(doc.gold_index, list) else [doc.gold_index]
    assert golds, "no gold answer"
    for gold in golds:
        assert isinstance(gold, int) and not isinstance(gold, bool)
        if gold == -1 and allow_unlabeled:
            continue
        assert 0 <= gold < len(doc.choices), f"gold {gold} out of range"
    assert doc.instruction is None or isinstance(doc.instruction, str)
    if doc.instruction:
        assert doc.query.startswith(doc.instruction)
    assert doc.fewshot_sorting_class is None or isinstance(doc.fewshot_sorting_class, str)


CONFIG_IDS = [config.name for _, config in all_configs()]


# --- modules and configs ----------------------------------------------------------------------


@pytest.mark.parametrize("relative", list(EXPECTED_NAMES))
def test_module_registers_expected_tasks(relative: str) -> None:
    module = load_task_module(relative)
    table = module.TASKS_TABLE
    assert isinstance(table, list)
    assert all(isinstance(config, LightevalTaskConfig) for config in table)
    assert [config.name for config in table] == EXPECTED_NAMES[relative]


@pytest.mark.parametrize("relative", list(EXPECTED_NAMES))
def test_module_is_documented_and_typed(relative: str) -> None:
    module = load_task_module(relative)
    doc = inspect.getdoc(module)
    assert doc and "Covers:" in doc
    for config in module.TASKS_TABLE:
        assert config.hf_repo in doc, f"docstring should name {config.hf_repo}"
    for name, function in inspect.getmembers(module, inspect.isfunction):
        if function.__module__ != module.__name__:
            continue
        assert inspect.getdoc(function), f"{name} has no docstring"
        signature = inspect.signature(function)
        assert signature.return_annotation is not inspect.Signature.empty, name
        for parameter in signature.parameters.values():
            assert parameter.annotation is not inspect.Parameter.empty, f"{name}.{parameter}"


EXPECTED_CONFIGS: dict[str, tuple[str, str, list[str], str | None, int, list[str]]] = {
    "gsm8k": (
        "openai/gsm8k",
        "main",
        ["test"],
        "random_sampling_from_train",
        256,
        ["Question:"],
    ),
    "arc:challenge": (
        "allenai/ai2_arc",
        "ARC-Challenge",
        ["test"],
        "random_sampling_from_train",
        1,
        ["\n"],
    ),
    "arc:easy": (
        "allenai/ai2_arc",
        "ARC-Easy",
        ["test"],
        "random_sampling_from_train",
        1,
        ["\n"],
    ),
    "hellaswag": ("Rowan/hellaswag", "default", ["validation"], "random", 1, ["\n"]),
    "truthfulqa:mc": (
        "truthfulqa/truthful_qa",
        "multiple_choice",
        ["validation"],
        None,
        -1,
        ["\n"],
    ),
    "winogrande": (
        "allenai/winogrande",
        "winogrande_xl",
        ["validation"],
        "random_sampling",
        -1,
        ["\n"],
    ),
    "boolq": ("lighteval/boolq_helm", "default", ["validation"], "balanced", 5, ["\n"]),
    "piqa": ("ybisk/piqa", "plain_text", ["validation", "test"], None, 1, ["\n"]),
    "openbookqa": ("allenai/openbookqa", "main", ["validation", "test"], "sequential", 1, ["\n"]),
    "ifeval": ("google/IFEval", "default", ["train"], "random_sampling", 1280, []),
}
"""(hf_repo, hf_subset, evaluation_splits, few_shots_select, generation_size, stop_sequence)."""


@pytest.mark.parametrize(("relative", "config"), all_configs(), ids=CONFIG_IDS)
def test_config_values(relative: str, config: LightevalTaskConfig) -> None:
    if config.name.startswith("mmlu:"):
        expected: tuple[Any, ...] = (
            "lighteval/mmlu",
            config.name.removeprefix("mmlu:"),
            ["test"],
            None,
            5,
            ["\n"],
        )
        assert config.few_shots_split == "dev"
        assert config.metric_names == ["em"]
    elif config.name.startswith("bigbench_hard:"):
        suffix = config.name.removeprefix("bigbench_hard:")
        subset = "causal_judgement" if suffix == "causal_judgment" else suffix
        expected = ("lighteval/bbh", subset, ["train"], None, -1, ["</s>", "Q=", "\n\n"])
    else:
        expected = EXPECTED_CONFIGS[config.name]
    actual = (
        config.hf_repo,
        config.hf_subset,
        config.evaluation_splits,
        config.few_shots_select,
        config.generation_size,
        config.stop_sequence,
    )
    assert actual == expected


def test_task_names_are_unique() -> None:
    names = [config.name for _, config in all_configs()]
    assert len(names) == len(set(names)) == 73


def test_task_modules_are_self_contained() -> None:
    for relative in EXPECTED_NAMES:
        source = (TASKS_DIR / relative).read_text(encoding="utf-8")
        assert not re.search(r"^\s*from \.", source, re.MULTILINE), relative
        assert "lighteval" not in re.findall(r"^\s*(?:from|import) (\w+)", source, re.MULTILINE)


@pytest.mark.parametrize(("relative", "config"), all_configs(), ids=CONFIG_IDS)
def test_needed_splits_have_local_data(relative: str, config: LightevalTaskConfig) -> None:
    needed = list(config.evaluation_splits)
    pool = few_shot_split(config)
    if pool is not None:
        needed.append(pool)
    for split in needed:
        assert (dataset_dir(config) / f"{split}.jsonl").is_file(), f"{config.name}: {split}"


# --- prompts over every local row -------------------------------------------------------------


@pytest.mark.parametrize(("relative", "config"), all_configs(), ids=CONFIG_IDS)
def test_prompt_over_every_local_row(relative: str, config: LightevalTaskConfig) -> None:
    files = sorted(dataset_dir(config).glob("*.jsonl"))
    assert files
    for path in files:
        allow_unlabeled = (config.hf_repo, path.stem) in UNLABELED_SPLITS
        for index, row in enumerate(read_jsonl(path)):
            for few_shots in (False, True):
                doc = run_prompt(config, row, index, few_shots)
                if relative == "winogrande.py" and row["sentence"].count("_") != 1:
                    assert doc is None, "a sentence without one blank must be dropped"
                    continue
                assert doc is not None, f"{path.name}:{index} was dropped"
                check_doc(doc, config, allow_unlabeled)


def test_mmlu_prompt_shape() -> None:
    config = load_task_module("mmlu.py").TASKS_TABLE[0]
    row = read_jsonl(dataset_dir(config) / "dev.jsonl")[0]
    doc = run_prompt(config, row, 0, False)
    assert doc is not None
    header = "The following are multiple choice questions (with answers) about abstract algebra."
    assert doc.instruction == header + "\n\n"
    assert doc.query.startswith(doc.instruction + "Question: " + row["question"] + "\nA. ")
    assert doc.query.endswith(f"\nD. {row['choices'][3]}\nAnswer:")
    assert doc.choices == [" A", " B", " C", " D"]
    assert doc.gold_index == row["answer"]
    assert doc.fewshot_sorting_class == row["choices"][row["answer"]]


def test_piqa_few_shot_rows_answer_with_the_solution_text() -> None:
    config = load_task_module("piqa.py").TASKS_TABLE[0]
    row = read_jsonl(dataset_dir(config) / "train.jsonl")[0]
    evaluated = run_prompt(config, row, 0, False)
    example = run_prompt(config, row, 0, True)
    assert evaluated is not None and example is not None
    assert evaluated.query == example.query
    assert evaluated.choices == ["A", "B"]
    assert example.choices == [row["sol1"], row["sol2"]]


def test_bbh_null_columns_fall_back_to_default_prefixes() -> None:
    config = load_task_module("bigbench_hard.py").TASKS_TABLE[4]  # sports_understanding
    row = read_jsonl(dataset_dir(config) / "train.jsonl")[0]
    assert row["task_prefix"] is None
    doc = run_prompt(config, row, 0, False)
    assert doc is not None
    assert doc.instruction is None
    assert doc.query == (
        "\nQuestion: " + row["input"] + "\n  Choices: \nA. plausible\nB. implausible\nAnswer: "
    )


# --- data files -------------------------------------------------------------------------------


def local_data_files() -> list[Path]:
    """The bundled data files: those of the bundled datasets' repositories (a user's own task
    added to this folder, as in the README walkthrough, brings data this test does not judge)."""
    return sorted(
        path
        for path in DATA_DIR.rglob("*.jsonl")
        if "/".join(path.relative_to(DATA_DIR).parts[:2]) in SCHEMAS
    )


def test_every_data_file_belongs_to_a_task() -> None:
    dirs = {dataset_dir(config) for _, config in all_configs()}
    for path in local_data_files():
        assert path.parent in dirs, f"{path} is read by no bundled task"


@pytest.mark.parametrize(
    "path", local_data_files(), ids=lambda p: str(p.relative_to(DATA_DIR)).removesuffix(".jsonl")
)
def test_data_file_format_and_schema(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and "\r" not in text
    lines = text.splitlines()
    assert 3 <= len(lines) <= 8, "a few rows per split"
    repo = "/".join(path.relative_to(DATA_DIR).parts[:2])
    schema = SCHEMAS[repo]
    for line in lines:
        row = json.loads(line)
        assert json.dumps(row, ensure_ascii=False) == line, "one compact UTF-8 object a line"
        assert list(row) == list(schema), f"columns of {repo}"
        for column, check in schema.items():
            assert check(row[column]), f"{repo}: bad {column}: {row[column]!r}"


def test_mmlu_data_covers_every_subject() -> None:
    for subject in MMLU_SUBJECTS:
        directory = DATA_DIR / "lighteval" / "mmlu" / subject
        dev = read_jsonl(directory / "dev.jsonl")
        test = read_jsonl(directory / "test.jsonl")
        assert len(dev) == 5 and 3 <= len(test) <= 6, subject
        for row in dev + test:
            assert row["subject"] == subject
            assert len(row["choices"]) == 4 and len(set(row["choices"])) == 4
            assert 0 <= row["answer"] <= 3


def test_mmlu_generator_reproduces_the_data() -> None:
    spec = importlib.util.spec_from_file_location(
        "bundled_make_mmlu_data", DATA_DIR / "make_mmlu_data.py"
    )
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert list(generator.TOPICS) == MMLU_SUBJECTS
    for subject in MMLU_SUBJECTS:
        for split in ("dev", "test"):
            rows = read_jsonl(DATA_DIR / "lighteval" / "mmlu" / subject / f"{split}.jsonl")
            assert rows == [generator.make_row(subject, split, i) for i in range(len(rows))]


# --- few-shot pools and suite coverage --------------------------------------------------------


@pytest.mark.parametrize(("relative", "config"), all_configs(), ids=CONFIG_IDS)
def test_few_shot_pool_is_large_enough_for_five_shots(
    relative: str, config: LightevalTaskConfig
) -> None:
    pool_split = few_shot_split(config)
    splits = [pool_split] if pool_split is not None else list(config.evaluation_splits)
    pool = [doc for split in splits for doc in docs_of_split(config, split, few_shots=True)]
    method = config.few_shots_select or "balanced"
    # random_sampling draws n + 1 and drops the evaluated doc; the others need n docs.
    needed = 6 if method == "random_sampling" or pool_split is None else 5
    assert len(pool) >= needed, f"{config.name}: {method} pool has {len(pool)} docs"


def test_suite_covers_every_harness_feature() -> None:
    configs = [config for _, config in all_configs()]
    methods = {config.few_shots_select or "balanced" for config in configs}
    assert methods == SELECTION_METHODS
    assert any(len(config.evaluation_splits) >= 2 for config in configs)
    assert any(few_shot_split(config) is None for config in configs)

    dropped = instruction = sorting_class = False
    for config in configs:
        for path in sorted(dataset_dir(config).glob("*.jsonl")):
            for index, row in enumerate(read_jsonl(path)):
                doc = run_prompt(config, row, index, False)
                dropped = dropped or doc is None
                if doc is not None:
                    instruction = instruction or bool(doc.instruction)
                    sorting_class = sorting_class or doc.fewshot_sorting_class is not None
    assert dropped and instruction and sorting_class


# --- real rows (skipped without ../shared/realdata) ------------------------------------------


def realdata_dir() -> Path:
    """``$EVALTASKS_SHARED_DIR/realdata``, else ``../shared/realdata`` next to the repo."""
    shared = os.environ.get("EVALTASKS_SHARED_DIR")
    base = Path(shared) if shared else Path(__file__).resolve().parents[2] / "shared"
    return base / "realdata"


REALDATA = realdata_dir()
realdata = pytest.mark.skipif(not REALDATA.is_dir(), reason=f"{REALDATA} not found")


def real_rows(pattern: str) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(file stem, index, row) for every real row in the files matching ``pattern``."""
    paths = sorted(REALDATA.glob(pattern))
    assert paths, f"no real data matches {pattern}"
    for path in paths:
        for index, row in enumerate(read_jsonl(path)):
            yield path.stem, index, row


def task(relative: str, position: int = 0) -> LightevalTaskConfig:
    config: LightevalTaskConfig = load_task_module(relative).TASKS_TABLE[position]
    return config


def real_doc(config: LightevalTaskConfig, row: dict[str, Any], index: int, few: bool) -> Doc:
    doc = run_prompt(config, row, index, few)
    assert doc is not None
    return doc


@pytest.mark.realdata
@realdata
def test_real_mmlu() -> None:
    config = task("mmlu.py")
    count = 0
    for _, index, row in real_rows("lighteval/mmlu/*/*.jsonl"):
        doc = real_doc(config, row, index, False)
        topic = row["subject"].replace("_", " ")
        header = f"The following are multiple choice questions (with answers) about {topic}."
        assert doc.instruction == header + "\n\n"
        assert doc.query.startswith(doc.instruction + "Question: " + row["question"])
        for letter, text in zip("ABCD", row["choices"], strict=True):
            assert f"\n{letter}. {text}" in doc.query
        assert doc.query.endswith("\nAnswer:")
        assert doc.choices == [" A", " B", " C", " D"]
        assert doc.gold_index == row["answer"]
        assert doc.fewshot_sorting_class == row["choices"][row["answer"]]
        count += 1
    assert count > 0


@pytest.mark.realdata
@realdata
def test_real_gsm8k() -> None:
    config = task("gsm8k.py")
    for _, index, row in real_rows("openai/gsm8k/main/*.jsonl"):
        doc = real_doc(config, row, index, False)
        assert doc.query == f"Question: {row['question']}\nAnswer:"
        assert doc.choices == [" " + row["answer"]]
        assert doc.gold_index == 0
        assert re.search(r"\n#### \S+$", doc.choices[0])


@pytest.mark.realdata
@realdata
def test_real_arc() -> None:
    for position in (0, 1):
        config = task("arc.py", position)
        for _, index, row in real_rows(f"allenai/ai2_arc/{config.hf_subset}/*.jsonl"):
            doc = real_doc(config, row, index, False)
            texts, labels = row["choices"]["text"], row["choices"]["label"]
            assert doc.query == f"Question: {row['question']}\nAnswer:"
            assert [choice[1:] for choice in doc.choices] == texts
            assert isinstance(doc.gold_index, int)
            assert labels[doc.gold_index] == row["answerKey"]


@pytest.mark.realdata
@realdata
def test_real_hellaswag() -> None:
    config = task("hellaswag.py")
    for _, index, row in real_rows("Rowan/hellaswag/default/*.jsonl"):
        doc = real_doc(config, row, index, False)
        assert doc.instruction is not None and doc.query.startswith(doc.instruction)
        assert f"Question: {row['activity_label']}: {row['ctx_a']} " in doc.query
        for letter, ending in zip(ascii_uppercase, row["endings"], strict=False):
            assert f"\n{letter}. {ending}\n" in doc.query
        assert doc.query.endswith("\nAnswer:")
        assert len(doc.choices) == len(row["endings"])
        assert doc.gold_index == int(row["label"])


@pytest.mark.realdata
@realdata
def test_real_truthfulqa_mc() -> None:
    config = task("truthfulqa.py")
    for _, index, row in real_rows("truthfulqa/truthful_qa/multiple_choice/*.jsonl"):
        doc = real_doc(config, row, index, False)
        mc1, mc2 = row["mc1_targets"], row["mc2_targets"]
        assert doc.query.endswith(f"\n\nQ: {row['question']}\nA:")
        assert doc.query.count("Q: ") == 7
        assert len(doc.choices) == len(mc1["choices"]) + len(mc2["choices"])
        labels = mc1["labels"] + mc2["labels"]
        assert isinstance(doc.gold_index, list)
        assert doc.gold_index == [i for i, label in enumerate(labels) if label == 1]
        assert doc.specific == {"len_mc1": len(mc1["choices"])}


@pytest.mark.realdata
@realdata
def test_real_winogrande() -> None:
    config = task("winogrande.py")
    for split, index, row in real_rows("allenai/winogrande/*/*.jsonl"):
        doc = real_doc(config, row, index, False)
        rest = row["sentence"].split("_", 1)[1].strip()
        assert row["sentence"].startswith(doc.query)
        assert doc.choices == [f"{row['option1']} {rest}", f"{row['option2']} {rest}"]
        expected = -1 if split == "test" else int(row["answer"]) - 1
        assert doc.gold_index == expected


@pytest.mark.realdata
@realdata
def test_real_boolq() -> None:
    config = task("boolq.py")
    for _, index, row in real_rows("google/boolq/default/*.jsonl"):
        # google/boolq has a boolean answer; HELM's version (the task's dataset) says Yes/No.
        helm_row = {**row, "answer": "Yes" if row["answer"] else "No", "contrast_inputs": None}
        doc = real_doc(config, helm_row, index, False)
        assert doc.query == f"Passage: {row['passage']}\nQuestion: {row['question']}\nAnswer:"
        assert doc.choices == [" Yes", " No"]
        assert doc.gold_index == (0 if row["answer"] else 1)


@pytest.mark.realdata
@realdata
def test_real_piqa() -> None:
    config = task("piqa.py")
    for split, index, row in real_rows("ybisk/piqa/plain_text/*.jsonl"):
        doc = real_doc(config, row, index, False)
        example = real_doc(config, row, index, True)
        assert f"\nQuestion: {row['goal']}\nA. {row['sol1']}\nB. {row['sol2']}\n" in doc.query
        assert doc.query.endswith("Answer: ")
        assert doc.choices == ["A", "B"]
        assert example.choices == [row["sol1"], row["sol2"]]
        assert doc.gold_index == row["label"]
        if split != "test":
            assert doc.gold_index in (0, 1)


_BBH_OPTION = re.compile(r"^\(([A-Z])\) (.*)$")


def lighteval_bbh_row(row: dict[str, Any]) -> dict[str, Any] | None:
    """A ``lukaemon/bbh`` row (options inside ``input``) in the shape ``lighteval/bbh`` has."""
    text, target = row["input"], row["target"]
    if "\nOptions:\n" not in text:
        return None
    stem, listed = text.split("\nOptions:\n", 1)
    choices: list[str] = []
    keys: list[str] = []
    for line in listed.split("\n"):
        match = _BBH_OPTION.match(line)
        if match:
            keys.append(f"({match.group(1)})")
            choices.append(match.group(2))
        elif line.startswith("- "):
            keys.append(line[2:].strip())
            choices.append(line[2:])
    return {"input": stem, "choices": choices, "target_idx": keys.index(target)}


@pytest.mark.realdata
@realdata
def test_real_bigbench_hard() -> None:
    config = task("bigbench_hard.py")
    count = 0
    for _, index, row in real_rows("lukaemon/bbh/*/*.jsonl"):
        shaped = lighteval_bbh_row(row)
        if shaped is None:
            continue
        doc = real_doc(config, shaped, index, False)
        assert doc.query.startswith("\nQuestion: " + shaped["input"] + "\n  Choices: ")
        assert doc.query.endswith("\nAnswer: ")
        assert doc.choices == list(ascii_uppercase[: len(shaped["choices"])])
        assert doc.gold_index == shaped["target_idx"]
        assert doc.instruction is None
        count += 1
    assert count > 0


@pytest.mark.realdata
@realdata
def test_real_ifeval() -> None:
    config = task("ifeval/main.py")
    for _, index, row in real_rows("google/IFEval/default/*.jsonl"):
        doc = real_doc(config, row, index, False)
        assert doc.query == row["prompt"]
        assert doc.instruction == ""
        assert doc.choices == [""] and doc.gold_index == 0
        assert doc.specific == {
            "instructions_id_list": row["instruction_id_list"],
            "kwargs": row["kwargs"],
        }
