"""Canonical identities: every change that could change a prompt or a score is seen, and the
same project at two paths, in two processes, under two hash seeds, gives the same bytes."""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_evaltasks.engine.paths import machine_text, relative_path_text
from pytest_evaltasks.snapshot.identity import (
    UnidentifiableValue,
    identity,
    identity_digest,
    identity_text,
)

# -- helpers ----------------------------------------------------------------------------------


def normalize(text: str, lang: str = "en") -> str:
    return text.lower() if lang == "en" else text.casefold()


def make_scorer(threshold: float) -> Callable[[float], bool]:
    def scorer(value: float) -> bool:
        return value >= threshold

    return scorer


class Threshold:
    __slots__ = ("threshold",)

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold


class Private:
    def __init__(self, hidden: int) -> None:
        self.name = "metric"
        self._hidden = hidden


class Plain:
    def __init__(self) -> None:
        self.x = 1


class Holder:
    def __init__(self) -> None:
        self.inner = Plain()
        self.sentinel = object()


@dataclasses.dataclass
class Metric:
    name: str
    sample_level_fn: Any


class Scorer:
    def __init__(self) -> None:
        self.threshold = 0.5
        self._lock = threading.Lock()


class Color(enum.Enum):
    RED = 1
    BLUE = 2


_MODULE_COUNTER = iter(range(10**6))


@pytest.fixture
def load(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., types.ModuleType]]:
    """Import a file as a module under a given name; a private `_evaltasks_*` package is
    registered as the task loader does. Every module is removed from `sys.modules` after."""

    def load(path: Path, name: str | None = None) -> types.ModuleType:
        name = name or f"identity_probe_{next(_MODULE_COUNTER)}"
        if "." in name:
            package_name = name.rsplit(".", 1)[0]
            package = types.ModuleType(package_name)
            package.__path__ = [str(path.parent)]
            monkeypatch.setitem(sys.modules, package_name, package)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, module)
        spec.loader.exec_module(module)
        return module

    yield load


def private_name(directory: Path, stem: str) -> str:
    """A module name like the task loader's: a package named for the absolute path."""
    digest = hashlib.sha1(str(directory.resolve()).encode()).hexdigest()[:10]
    return f"_evaltasks_{digest}.{stem}"


def write(directory: Path, name: str, source: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(textwrap.dedent(source))
    return path


def run_python(code: str, seed: str, *args: str) -> str:
    """Run `code` in a fresh interpreter with a given hash seed; its standard output."""
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


# -- settings held by callables -----------------------------------------------------------------


def test_a_partial_with_another_keyword_is_another_identity() -> None:
    french = functools.partial(normalize, lang="fr")
    assert identity_text(french) != identity_text(functools.partial(normalize, lang="en"))
    assert identity_text(french) == identity_text(functools.partial(normalize, lang="fr"))
    assert identity_text(functools.partial(normalize, "x")) != identity_text(
        functools.partial(normalize, "y")
    )


def test_closures_over_other_values_differ_and_over_equal_values_agree() -> None:
    assert identity_text(make_scorer(0.5)) != identity_text(make_scorer(0.7))
    assert identity_text(make_scorer(0.5)) == identity_text(make_scorer(0.5))


def test_an_edited_lambda_body_is_another_identity(
    tmp_path: Path, load: Callable[..., types.ModuleType]
) -> None:
    before = load(write(tmp_path / "a", "task.py", "strip = lambda s: s.strip()\n"))
    after = load(write(tmp_path / "b", "task.py", "strip = lambda s: s.strip().lower()\n"))
    same = load(write(tmp_path / "c", "task.py", "strip = lambda s: s.strip()\n"))
    assert identity_text(before.strip, tmp_path / "a") != identity_text(after.strip, tmp_path / "b")
    assert identity_text(before.strip, tmp_path / "a") == identity_text(same.strip, tmp_path / "c")


def test_a_changed_default_is_another_identity(
    tmp_path: Path, load: Callable[..., types.ModuleType]
) -> None:
    source = "def score(pred, gold, threshold={}):\n    return pred == gold\n"
    low = load(write(tmp_path / "a", "task.py", source.format("0.5")))
    high = load(write(tmp_path / "b", "task.py", source.format("0.7")))
    assert identity_text(low.score, tmp_path / "a") != identity_text(high.score, tmp_path / "b")

    def keyword_only(*, threshold: float = 0.5) -> float:
        return threshold

    before = identity_text(keyword_only)
    keyword_only.__kwdefaults__ = {"threshold": 0.7}
    assert identity_text(keyword_only) != before


def test_an_edited_helper_that_a_function_calls_is_another_identity(
    tmp_path: Path, load: Callable[..., types.ModuleType]
) -> None:
    source = """
        STOP = {stop}

        def _clean(text):
            return text.{method}()

        def score(pred, gold):
            return _clean(pred) == _clean(gold) and pred not in STOP
    """
    variants = [
        ("{'a'}", "lower"),
        ("{'a'}", "casefold"),  # the helper's body
        ("{'an'}", "lower"),  # a module constant the function reads
    ]
    texts = []
    for index, (stop, method) in enumerate(variants):
        directory = tmp_path / str(index)
        module = load(write(directory, "task.py", source.format(stop=stop, method=method)))
        texts.append(identity_text(module.score, directory))
    assert len(set(texts)) == 3


def test_an_edited_method_of_an_own_class_is_another_identity(
    tmp_path: Path, load: Callable[..., types.ModuleType]
) -> None:
    source = """
        import functools

        class Match:
            def __init__(self):
                self.strip = True

            def compute(self, pred, gold):
                return pred.{method}() == gold

        @functools.lru_cache(maxsize=None)
        def cached(text):
            return text.{method}()
    """
    texts = []
    for method in ("strip", "lower"):
        directory = tmp_path / method
        module = load(write(directory, "task.py", source.format(method=method)))
        texts.append(
            (identity_text(module.Match(), directory), identity_text(module.cached, directory))
        )
    assert texts[0][0] != texts[1][0]
    assert texts[0][1] != texts[1][1]


# -- object state -------------------------------------------------------------------------------


def test_a_slot_and_a_private_attribute_are_state() -> None:
    assert identity_text(Threshold(0.5)) != identity_text(Threshold(0.7))
    assert identity_text(Threshold(0.5)) == identity_text(Threshold(0.5))
    assert identity_text(Private(1)) != identity_text(Private(2))
    unset = Threshold.__new__(Threshold)
    assert identity_text(unset) != identity_text(Threshold(0.5))


def test_a_bound_method_carries_its_object() -> None:
    assert identity_text(Private(1).__init__) != identity_text(Private(2).__init__)


def test_a_pydantic_private_attribute_is_state() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Config(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        name: str = "x"
        _seed: int = 0

    one, two = Config(), Config()
    two._seed = 1
    assert identity_text(one) != identity_text(two)
    assert identity_text(one) == identity_text(Config())


# -- plain values -------------------------------------------------------------------------------


def test_dict_keys_keep_their_type_and_never_their_order() -> None:
    assert identity_text({1: "gold"}) != identity_text({"1": "gold"})
    assert identity_text({"a": 1, "b": 2}) == identity_text({"b": 2, "a": 1})
    assert identity_text({2: "b", 1: "a", "x": 0}) == identity_text({"x": 0, 1: "a", 2: "b"})
    # a plain dict that looks like a tagged value is not one
    assert identity_text({"__float__": "nan"}) != identity_text(float("nan"))


def test_true_one_and_one_point_zero_differ() -> None:
    texts = {identity_text(value) for value in (True, 1, 1.0)}
    assert len(texts) == 3
    nested = {identity_text([value, {"k": value}]) for value in (True, 1, 1.0)}
    assert len(nested) == 3
    assert identity_text(-0.0) != identity_text(0.0)


def test_non_finite_floats_bytes_paths_and_enums_have_identities() -> None:
    texts = [
        identity_text(value)
        for value in (float("nan"), float("inf"), float("-inf"), b"x", bytearray(b"y"))
    ]
    assert len(set(texts)) == 5
    assert identity_text(Path("data/x")) != identity_text("data/x")
    assert identity_text(Color.RED) != identity_text(Color.BLUE)
    assert identity_text(Color.RED) != identity_text(1)


def test_sets_are_ordered_by_content_not_by_hash_seed() -> None:
    code = textwrap.dedent(
        """
        import json
        from pytest_evaltasks.snapshot.identity import identity_text

        words = {f"word{index}" for index in range(40)}
        print(json.dumps([
            identity_text(words),
            identity_text({"stop": frozenset(words), "letters": set("abcdefgh")}),
            identity_text({("a", 1), ("b", 2), ("c", 3)}),
            list(words),
        ]))
        """
    )
    first, second = (json.loads(run_python(code, seed)) for seed in ("0", "1"))
    assert first[3] != second[3], "the two seeds did not even order the raw set differently"
    assert first[:3] == second[:3]


# -- clones ---------------------------------------------------------------------------------------

TASK_MODULE = '''
"""A task-like module: functions, a closure, a class with a method, a metric holding them."""

import dataclasses
import enum
import functools
import logging
import os
import re
from pathlib import Path

HERE = Path(__file__).parent
DATA_FILE = os.path.join(os.path.dirname(__file__), "data", "train.jsonl")
STOP = {"the", "a", "an", "of", "to", "in"}
logger = logging.getLogger(__name__)


class Category(enum.Enum):
    GENERATIVE = "generative"
    LOGPROBS = "logprobs"


def normalize(text, lang="en"):
    words = [word for word in re.split(r"\\s+", text.lower()) if word not in STOP]
    return " ".join(words)


def make_scorer(threshold):
    def scorer(pred, gold):
        logger.debug("scoring")
        return (normalize(pred) == normalize(gold)) >= threshold

    return scorer


class ExactMatch:
    __slots__ = ("threshold", "_strip")

    def __init__(self, threshold):
        self.threshold = threshold
        self._strip = True

    def compute(self, pred, gold):
        return float(normalize(pred) == normalize(gold))


class Plain:
    def __init__(self):
        self.sentinel = object()


@dataclasses.dataclass
class Metric:
    name: str
    category: Category
    sample_level_fn: object
    corpus_level_fn: object
    normalizer: object
    hooks: list = dataclasses.field(default_factory=list)


def prompt(line, task_name=None):
    return f"Question: {line['question']}\\nAnswer:"


METRIC = Metric(
    name="em",
    category=Category.GENERATIVE,
    sample_level_fn=ExactMatch(0.5),
    corpus_level_fn=make_scorer(0.7),
    normalizer=functools.partial(normalize, lang="fr"),
    hooks=[lambda text: text.strip(), Plain(), max, str.lower, ExactMatch(0.5).compute],
)
CONFIG = {
    "prompt_function": prompt,
    "metrics": [METRIC],
    "hf_data_files": DATA_FILE,
    "hf_repo": str(HERE),
    "local": HERE / "data",
    "stop": STOP,
    "module_name": __name__,
}
'''


def make_clone(directory: Path, source: str = TASK_MODULE) -> Path:
    """One "clone" of a project: the task module under `tasks/`, and its data folder."""
    path = write(directory / "tasks", "taskmod.py", source)
    (directory / "tasks" / "data").mkdir(exist_ok=True)
    return path


def test_two_clones_of_a_project_give_the_same_bytes(
    tmp_path: Path, load: Callable[..., types.ModuleType]
) -> None:
    first_root, second_root = tmp_path / "home" / "alice" / "proj", tmp_path / "ci" / "b"
    first_path, second_path = make_clone(first_root), make_clone(second_root)
    first = load(first_path, private_name(first_path.parent, "taskmod"))
    second = load(second_path, private_name(second_path.parent, "taskmod"))
    assert first.__name__ != second.__name__
    texts = [
        identity_text(first.CONFIG, first_root),
        identity_text(second.CONFIG, second_root),
    ]
    assert texts[0] == texts[1]
    assert str(tmp_path) not in texts[0] and "_evaltasks_" not in texts[0]
    assert '"tasks/data/train.jsonl"' in texts[0]
    # a plain module name for one clone: every location is still its path inside the root
    plain = load(make_clone(tmp_path / "c"), "plain_taskmod")
    assert identity_text(plain.METRIC, tmp_path / "c") == identity_text(first.METRIC, first_root)


def test_an_edited_function_body_in_one_clone_is_seen(
    tmp_path: Path, load: Callable[..., types.ModuleType]
) -> None:
    original = load(make_clone(tmp_path / "a"))
    edits = {
        "helper": TASK_MODULE.replace("text.lower()", "text.casefold()"),
        "method": TASK_MODULE.replace("return float(", "return 1 - float("),
        "closure body": TASK_MODULE.replace(">= threshold", "> threshold"),
        "lambda": TASK_MODULE.replace("text.strip()", "text.rstrip()"),
        "stop words": TASK_MODULE.replace('"in"}', '"on"}'),
        "dataclass default": TASK_MODULE.replace("default_factory=list", "default=None"),
    }
    reference = identity_text(original.METRIC, tmp_path / "a")
    for index, (edit, source) in enumerate(edits.items()):
        assert source != TASK_MODULE, edit
        root = tmp_path / f"edit{index}"
        edited = load(make_clone(root, source))
        assert identity_text(edited.METRIC, root) != reference, edit


def test_moving_code_down_the_file_keeps_its_identity(
    tmp_path: Path, load: Callable[..., types.ModuleType]
) -> None:
    original_path = make_clone(tmp_path / "a")
    original = load(original_path, private_name(original_path.parent, "taskmod"))
    moved_source = TASK_MODULE.replace("import dataclasses", "# a comment\n\n\nimport dataclasses")
    moved_path = make_clone(tmp_path / "b", moved_source)
    moved = load(moved_path, private_name(moved_path.parent, "taskmod"))
    assert moved.normalize.__code__.co_firstlineno != original.normalize.__code__.co_firstlineno
    assert identity_text(moved.CONFIG, tmp_path / "b") == identity_text(
        original.CONFIG, tmp_path / "a"
    )


def test_two_clones_in_two_processes_with_two_seeds_give_the_same_bytes(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import hashlib, importlib.util, sys, types
        from pathlib import Path
        from pytest_evaltasks.snapshot.identity import identity_text

        root = Path(sys.argv[1])
        path = root / "tasks" / "taskmod.py"
        digest = hashlib.sha1(str(path.parent.resolve()).encode()).hexdigest()[:10]
        package = types.ModuleType(f"_evaltasks_{digest}")
        package.__path__ = [str(path.parent)]
        sys.modules[package.__name__] = package
        spec = importlib.util.spec_from_file_location(f"{package.__name__}.taskmod", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        print(identity_text(module.CONFIG, root))
        """
    )
    first_root, second_root = tmp_path / "one", tmp_path / "two" / "deeper"
    make_clone(first_root)
    make_clone(second_root)
    first = run_python(code, "0", str(first_root))
    second = run_python(code, "1", str(second_root))
    assert first == second
    assert str(tmp_path) not in first


# -- no address, no path, no unbounded walk --------------------------------------------------------


def test_no_memory_address_is_ever_recorded() -> None:
    values: list[Any] = [
        Holder(),
        [Plain(), Plain()],
        object(),
        make_scorer(0.5),
        lambda text: text,
        Holder().__init__,
        "abc".upper,
        len,
        str.lower,
        functools.partial(normalize, lang="fr"),
        Metric("em", Plain()),
        Metric,
        Color.RED,
        {Color.RED: Plain()},
    ]
    for value in values:
        text = identity_text(value)
        assert " at 0x" not in text and not re.search(r"0x[0-9a-fA-F]{4,}", text), text


def test_cycles_terminate() -> None:
    looped: list[Any] = [1]
    looped.append(looped)
    mapping: dict[str, Any] = {}
    mapping["self"] = mapping
    holder = Holder()
    holder.inner.x = holder  # type: ignore[assignment]
    for value in (looped, mapping, holder):
        assert "__cycle__" in identity_text(value)
    assert identity_text(looped) == identity_text(looped)


def test_mutually_recursive_functions_terminate(
    tmp_path: Path, load: Callable[..., types.ModuleType]
) -> None:
    source = """
        def even(n):
            return n == 0 or odd(n - 1)

        def odd(n):
            return n != 0 and even(n - 1)
    """
    module = load(write(tmp_path, "task.py", source))
    assert identity_text(module.even, tmp_path) == identity_text(module.even, tmp_path)


def test_a_very_deep_value_is_refused_not_a_recursion_error() -> None:
    deep: Any = []
    for _ in range(3000):
        deep = [deep]
    with pytest.raises(UnidentifiableValue, match="nested more than 100 levels deep at value"):
        identity(deep)
    nested_dict: Any = {}
    for _ in range(3000):
        nested_dict = {"k": nested_dict}
    with pytest.raises(UnidentifiableValue):
        identity(nested_dict)
    shallow: Any = []
    for _ in range(90):
        shallow = [shallow]
    identity(shallow)


def test_a_lock_attribute_is_refused_naming_its_path() -> None:
    metric = Metric("em", Scorer())
    with pytest.raises(UnidentifiableValue) as caught:
        identity(metric)
    assert caught.value.path == "value.sample_level_fn._lock"
    message = str(caught.value)
    assert "value.sample_level_fn._lock" in message and "_thread.lock" in message
    assert "keep it out of the metric's attributes" in message
    assert isinstance(caught.value, TypeError)


def test_generators_and_open_files_are_refused(tmp_path: Path) -> None:
    generator = (x for x in range(3))
    with pytest.raises(UnidentifiableValue, match=r"value\[0\] holds a builtins.generator"):
        identity([generator])
    path = tmp_path / "f.txt"
    path.write_text("x")
    with path.open() as handle, pytest.raises(UnidentifiableValue, match=r"value\['file'\]"):
        identity({"file": handle})


# -- code the project does not own ----------------------------------------------------------------


def test_stdlib_functions_are_named_not_digested() -> None:
    assert identity(os.path.join) == {"__function__": f"{os.path.__name__}:join"}
    stdlib = Path(json.__file__).parent.parent  # a root that holds the stdlib: still not own
    assert identity(json.dumps, stdlib) == identity(json.dumps)
    assert "code" not in identity(json.dumps, stdlib)
    code = "import json, os\nfrom pytest_evaltasks.snapshot.identity import identity_text\n"
    code += "print(identity_text([os.path.join, json.dumps, len, str.lower, max]))"
    assert run_python(code, "0") == run_python(code, "1")
    assert run_python(code, "0").strip() == identity_text(
        [os.path.join, json.dumps, len, str.lower, max]
    )


def test_numpy_values_are_recorded_by_dtype_and_value() -> None:
    numpy = pytest.importorskip("numpy")
    assert identity_text(numpy.float64(1.0)) != identity_text(numpy.float32(1.0))
    assert identity_text(numpy.arange(3)) != identity_text(numpy.arange(4))
    assert identity_text(numpy.arange(3)) == identity_text(numpy.arange(3))
    big = numpy.zeros(20_000)
    changed = big.copy()
    changed[-1] = 1
    assert identity_text(big) != identity_text(changed)
    assert len(identity_text(big)) < 200
    assert identity_text(numpy.add) == identity_text(numpy.add)
    assert identity_text(numpy.add) != identity_text(numpy.multiply)


# -- paths --------------------------------------------------------------------------------------


def test_relative_path_text(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "data").mkdir(parents=True)
    assert relative_path_text(str(root / "data" / "x.json"), root) == "data/x.json"
    assert relative_path_text(str(root), root) == "."
    assert relative_path_text("/srv/elsewhere/x", root) == "/srv/elsewhere/x"
    assert relative_path_text("/srv/elsewhere", root) == "/srv/elsewhere"
    assert relative_path_text("data/x.json", root) == "data/x.json"
    assert relative_path_text("Question: /x", root) == "Question: /x"
    assert relative_path_text(str(root / "data"), None) == str(root / "data")
    link = tmp_path / "link"
    link.symlink_to(root, target_is_directory=True)
    assert relative_path_text(str(link / "data"), root) == "data"


def test_paths_under_home_or_the_temporary_folder_are_named_as_machine_dependent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`~/...` and `$TMPDIR/...`: the same record for every user and machine; the project's
    own paths stay relative to the root even inside those folders."""
    records = set()
    for user in ("alice", "bob"):
        home = tmp_path / user / "home"
        temporary = home / "tmp"  # the deeper folder names the path
        root = home / "project"
        for folder in (temporary, root):
            folder.mkdir(parents=True)
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setattr(tempfile, "tempdir", str(temporary))
        value = {
            "data": str(home / "datasets" / "x.json"),
            "scratch": temporary / "run" / "y.json",
            "own": str(root / "data" / "z.json"),
        }
        text = identity_text(value, root)
        assert str(tmp_path) not in text
        records.add(text)
    assert records == {
        '{"data":"~/datasets/x.json","own":"data/z.json",'
        '"scratch":{"__path__":"$TMPDIR/run/y.json"}}'
    }


def test_paths_inside_the_root_are_recorded_relative(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    value = {"files": [str(first / "x.json")], "dir": first / "data"}
    other = {"files": [str(second / "x.json")], "dir": second / "data"}
    assert identity_text(value, first) == identity_text(other, second)
    assert identity_text(value, first) != identity_text(value, second)


def test_identity_text_and_digest_are_the_canonical_json_of_identity() -> None:
    value = {"b": [1, 2.5, None], "a": {"x", "y"}, 3: "c"}
    structure = identity(value)
    text = json.dumps(structure, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert identity_text(value) == text
    assert identity_digest(value) == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert json.loads(text) == structure


def test_identity_is_fast_for_a_metric_like_object() -> None:
    metric = Metric("em", Holder())
    metric.sample_level_fn.inner.x = functools.partial(normalize, lang="fr")
    start = time.perf_counter()
    for _ in range(200):
        identity_text(metric)
    assert (time.perf_counter() - start) / 200 < 0.002


def test_a_copied_module_under_another_path_is_not_confused_with_the_original(
    tmp_path: Path, load: Callable[..., types.ModuleType]
) -> None:
    """Locations name the file inside the root, so two task files with the same function are
    told apart, and a file copied elsewhere in the root is another location."""
    source = "def prompt(line):\n    return line\n"
    first = load(write(tmp_path / "tasks", "one.py", source))
    second = load(write(tmp_path / "tasks", "two.py", source))
    assert identity_text(first.prompt, tmp_path) != identity_text(second.prompt, tmp_path)


# -- the same under every Python ----------------------------------------------------------------

VERSIONED_MODULE = '''\
import functools


def twice(fn):
    return fn


@twice
def score(pred, gold, *, weight=2):
    """A docstring."""
    parts = [word.lower() for word in pred.split() if word]
    label = f"{gold!r:>10} and {weight}"
    return sum(len(p) for p in parts) + len(label), (lambda x: x + 1)(weight)


PAIR = (lambda a: a + 1, lambda b: b * 2)


class Scorer:
    def __call__(self, pred: str) -> dict:
        return {k: v for k, v in zip("ab", (pred, pred))}


METRIC = {"fn": score, "pair": PAIR, "scorer": Scorer(), "partial": functools.partial(score)}
'''

DIGEST_SCRIPT = """\
import importlib, sys, types
from pathlib import Path
repo, project = sys.argv[1], Path(sys.argv[2])
for name in ("pytest_evaltasks", "pytest_evaltasks.snapshot", "pytest_evaltasks.engine"):
    package = types.ModuleType(name)  # the package's own imports need its dependencies
    package.__path__ = [str(Path(repo, *name.split(".")))]
    sys.modules[name] = package
identity = importlib.import_module("pytest_evaltasks.snapshot.identity")
sys.path.insert(0, str(project))
import scoring_module
print(identity.identity_digest(scoring_module.METRIC, project))
"""


def _other_pythons() -> list[str]:
    """Interpreters of other Python minor versions (3.11 and later) on this machine."""
    candidates = [shutil.which(f"python3.{minor}") for minor in range(11, 16)]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"), "versions")
    candidates += [str(path) for path in sorted(pyenv.glob("3.*/bin/python3"))]
    found: dict[str, str] = {}
    for candidate in candidates:
        if candidate is None:
            continue
        script = "import sys; print(sys.version_info[:2] >= (3, 11), sys.version_info[1])"
        probe = subprocess.run([candidate, "-c", script], capture_output=True, text=True)
        words = probe.stdout.split()
        if probe.returncode == 0 and words[:1] == ["True"] and int(words[1]) != sys.version_info[1]:
            found.setdefault(words[1], candidate)
    return sorted(found.values())


def test_an_identity_is_the_same_under_every_python_minor_version(tmp_path: Path) -> None:
    """Own code is digested by its source, not its bytecode (which 3.11, 3.12 and 3.13 compile
    differently): a record made under one Python holds under another."""
    others = _other_pythons()
    if not others:
        pytest.skip("no interpreter of another Python minor version (3.11+) on this machine")
    (tmp_path / "scoring_module.py").write_text(VERSIONED_MODULE, encoding="utf-8")
    repo = str(Path(__file__).resolve().parents[1])
    digests = {}
    for python in [sys.executable, *others]:
        done = subprocess.run(
            [python, "-c", DIGEST_SCRIPT, repo, str(tmp_path)],
            capture_output=True, text=True, check=False, env={**os.environ, "PYTHONPATH": ""},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        digests[python] = done.stdout.strip()
    assert len(set(digests.values())) == 1, digests


def test_an_edit_of_own_code_changes_its_digest_and_a_reformat_does_not(tmp_path: Path) -> None:
    module = tmp_path / "scoring_module.py"

    def digest(text: str) -> str:
        module.write_text(text, encoding="utf-8")
        name = f"scoring_module_{len(sys.modules)}"
        spec = importlib.util.spec_from_file_location(name, module)
        assert spec is not None and spec.loader is not None
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[name] = loaded  # a class's module must be found, as an import's is
        try:
            spec.loader.exec_module(loaded)
            return identity_digest(loaded.METRIC, tmp_path)
        finally:
            del sys.modules[name]

    base = digest(VERSIONED_MODULE)
    reformatted = VERSIONED_MODULE.replace("return fn", "return fn  # unchanged").replace(
        "PAIR = (lambda a: a + 1, lambda b: b * 2)",
        "PAIR = (\n    lambda a: a + 1,\n    lambda b: b * 2,\n)",
    )
    assert digest(reformatted) == base
    for old, new in [
        ("word.lower()", "word.upper()"),
        ("lambda b: b * 2", "lambda b: b * 3"),
        ("(lambda x: x + 1)", "(lambda x: x + 2)"),
        ("@twice\n", ""),
        ("weight=2", "weight=3"),
        ('zip("ab"', 'zip("ba"'),
    ]:
        assert old in VERSIONED_MODULE
        assert digest(VERSIONED_MODULE.replace(old, new)) != base, (old, new)


class _MachineBound:
    """A metric's attributes as one machine makes them."""

    def __init__(self) -> None:
        self.cache = os.path.expanduser("~/.cache/judge")
        self.scratch = tempfile.gettempdir()
        self.command = f"judge --cache={os.path.expanduser('~/.cache/judge')} --fast"
        self.files = [Path(tempfile.gettempdir(), "out.json"), sys.prefix + "/bin/judge"]
        self.hub = os.path.join(os.path.expanduser("~"), ".cache", "huggingface", "hub")


@pytest.mark.parametrize("home_is_root", [False, True])
def test_machine_folders_are_named_wherever_they_occur(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home_is_root: bool
) -> None:
    """Home, temporary, cache folders and the interpreter's prefix, whole or inside a longer
    string, are written by their variables: the identity is the same on two machines, even
    when one's home is the project's root (pytester's)."""
    root = tmp_path / "project"
    root.mkdir()
    identities = []
    for machine, home in (("one", root if home_is_root else tmp_path / "h1"), ("two", None)):
        home = home or tmp_path / f"home-{machine}"
        temporary = tmp_path / f"tmp-{machine}"
        home.mkdir(exist_ok=True)
        temporary.mkdir()
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setattr(tempfile, "tempdir", str(temporary))
        identities.append(identity_text(_MachineBound(), root))
    assert identities[0] == identities[1]
    assert "$XDG_CACHE_HOME/judge" in identities[0]
    assert "--cache=$XDG_CACHE_HOME/judge --fast" in identities[0]
    assert "$TMPDIR/out.json" in identities[0]
    assert "$PYTHON_PREFIX/bin/judge" in identities[0]
    assert "$HF_HOME/hub" in identities[0]


def test_a_path_inside_the_root_is_relative_unless_a_machine_folder_inside_holds_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    assert relative_path_text(str(root / "tasks" / "x.json"), root) == "tasks/x.json"
    venv = sysconfig_purelib()
    assert relative_path_text(os.path.join(venv, "pkg", "a.json"), root) == (
        "$SITE_PACKAGES/pkg/a.json"
    )
    assert machine_text("not a path") == "not a path"
    assert machine_text("/var/tmpfile/x /tmpx") == "/var/tmpfile/x /tmpx"


def sysconfig_purelib() -> str:
    import sysconfig

    return sysconfig.get_paths()["purelib"]
