"""The lm-eval index: every name lm-eval's own TaskManager registers offline is registered
here, under the same name, kind, file and tags; a run over a few names parses only the files
that can define them and still finds exactly lm-eval's entries; the kept index is verified
against the files it stands for."""

from __future__ import annotations

import random
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

lm_eval = pytest.importorskip("lm_eval")

from lm_eval_reference import manager  # noqa: E402

from pytest_evaltasks.engine.registry import Registry  # noqa: E402
from pytest_evaltasks.sources.lm_eval.index import _word_pattern  # noqa: E402
from pytest_evaltasks.sources.lm_eval.source import CACHE_KEY, LmEvalYaml  # noqa: E402


class Cache(dict[str, Any]):
    """pytest's cache interface (`get`, `set`)."""

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(key, default)

    def set(self, key: str, value: Any) -> None:
        self[key] = value


def source_of(registry: Registry) -> LmEvalYaml:
    return next(source for source in registry.sources if isinstance(source, LmEvalYaml))


def entries(index: dict[str, Any]) -> dict[str, tuple[str, str, list[str]]]:
    return {n: (e.kind.name, str(e.yaml_path), sorted(e.tags)) for n, e in index.items()}


@pytest.fixture(scope="module")
def theirs() -> Any:
    """lm-eval's own TaskManager over its whole folder (shared with the reference runs)."""
    return manager()


@pytest.fixture(scope="module")
def indexed(lm_eval_tasks: Path) -> tuple[Registry, Cache]:
    """A registry of lm-eval's whole folder, and the cache its index records were kept in
    (copied by tests that start from a warm cache: each record is verified before use)."""
    cache = Cache()
    return Registry([lm_eval_tasks], [], None, cache=cache), cache


EXCEPTIONS: dict[str, str] = {}
"""YAML tasks lm-eval's TaskManager registers offline that are not registered here under the
same name, each with why (none for lm-eval 0.4.13)."""


def test_every_name_lm_eval_registers_is_registered_here(
    indexed: tuple[Registry, Cache], theirs: Any
) -> None:
    """At least 99% of the YAML tasks lm-eval's own TaskManager registers (offline, its whole
    index) register here under the same name; the rest are EXCEPTIONS, with their reasons.
    The figures are printed (`-rP` shows them)."""
    registry, _ = indexed
    index = theirs.task_index
    kinds = Counter(entry.kind.name for entry in index.values())
    yaml_tasks = sorted(name for name, entry in index.items() if entry.kind.name == "TASK")
    registered = [name for name in yaml_tasks if name in registry.entries]
    missing = {
        name: registry.unusable[name].reason if name in registry.unusable else "not registered"
        for name in yaml_tasks
        if name not in registry.entries
    }
    share = len(registered) / len(yaml_tasks)
    print(
        f"lm-eval {lm_eval.__version__} registers {len(index):,} names offline: "
        + ", ".join(f"{kinds[kind]:,} {kind}" for kind in ("TASK", "PY_TASK", "GROUP", "TAG"))
        + f"; {len(registered):,} of its {len(yaml_tasks):,} YAML tasks register here under "
        f"the same name ({share:.2%}); {len(registry.entries):,} task names in all here"
    )
    for name, reason in missing.items():
        print(f"  not registered: {name}: {reason}")
    assert share >= 0.99
    assert {name: EXCEPTIONS.get(name, reason) for name, reason in missing.items()} == EXCEPTIONS
    # tasks, groups and tags alike: the same name, kind, file and tags as lm-eval's index
    assert entries(source_of(registry).index) == entries(index)
    assert set(registry.entries) == set(theirs.all_subtasks)  # YAML and Python-class tasks
    assert registry.names == sorted(theirs.all_subtasks)


def test_a_run_over_some_names_finds_lm_evals_entries(lm_eval_tasks: Path, theirs: Any) -> None:
    names = random.Random(4).sample(sorted(theirs.task_index), 12)
    names += ["mmlu", "arc_easy", "ai2_arc", "hellaswag", "leaderboard"]
    expected = entries(theirs.task_index)
    for name in names:
        registry = Registry([lm_eval_tasks], [], None, wanted=[name])
        source = source_of(registry)
        assert entries({name: source.index[name]}) == {name: expected[name]}, name
        assert registry.partial  # only what can define it was parsed


def test_group_members_are_found_without_the_whole_index(lm_eval_tasks: Path) -> None:
    registry = Registry([lm_eval_tasks], [], None, wanted=["mmlu"])
    requests = registry.resolve("mmlu|5")
    assert len(requests) == 57
    assert requests[0].label == "mmlu_abstract_algebra|5"
    assert all(registry.source_of(r.name).kind == "lm-eval" for r in requests)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def custom_folder(root: Path) -> Path:
    folder = root / "yaml"
    write(folder / "_template_yaml", "output_type: multiple_choice\ntag: [mine]\n")
    write(
        folder / "one.yaml",
        """\
        include: _template_yaml
        task: one
        dataset_path: me/one
        doc_to_text: "{{q}}"
        doc_to_target: 0
        doc_to_choice: ["a", "b"]
        test_split: test
        metadata:
          version: 1.0
        """,
    )
    return folder


def test_the_kept_index_is_verified_against_every_file_it_includes(
    tmp_path: Path, indexed: tuple[Registry, Cache]
) -> None:
    folder = custom_folder(tmp_path)
    cache = Cache(indexed[1])  # lm-eval's own folder indexed already
    first = Registry([folder], [], None, cache=cache)
    assert "one" in first.entries and CACHE_KEY in cache
    recorded = cache[CACHE_KEY]["files"][str(folder / "one.yaml")]
    assert str((folder / "_template_yaml").resolve()) in recorded["includes"]
    again = Registry([folder], [], None, wanted=["mine"], cache=cache)
    assert [r.name for r in again.resolve("mine")] == ["one"]
    (folder / "_template_yaml").write_text("output_type: multiple_choice\ntag: [theirs]\n")
    changed = Registry([folder], [], None, wanted=["theirs"], cache=cache)
    assert [r.name for r in changed.resolve("theirs")] == ["one"]
    with pytest.raises(Exception, match="unknown task"):
        changed.resolve("mine")


def test_a_custom_folder_overrides_lm_evals_task_as_include_path_does(
    lm_eval_tasks: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "mine"
    write(
        folder / "arc.yaml",
        """\
        task: arc_easy
        dataset_path: me/arc
        output_type: generate_until
        doc_to_text: "{{q}}"
        doc_to_target: "{{a}}"
        test_split: test
        """,
    )
    registry = Registry([folder], [], None, wanted=["arc_easy"])
    entry = registry.entries["arc_easy"]
    assert entry.origin == folder / "arc.yaml" and entry.listed
    assert any("overrides" in warning for warning in registry.shadowed)
    assert registry.names == ["arc_easy"]
    listed = Registry([folder], [], None)
    assert listed.names == ["arc_easy"]  # `all` over a custom folder: its own tasks


@pytest.mark.parametrize("wanted", [["clash"], None], ids=["named", "all"])
def test_a_name_both_a_task_module_and_a_yaml_define_is_unusable_naming_both(
    tmp_path: Path, wanted: list[str] | None
) -> None:
    """Which of two task folders of different kinds defines a name is no choice to make
    silently: the name is unusable, and the message names both files."""
    from pytest_evaltasks.errors import TaskStringError

    write(
        tmp_path / "modules" / "clash.py",
        """\
        from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

        def prompt(line, task_name):
            return Doc(query=line["q"], choices=[" a"], gold_index=0)

        TASKS_TABLE = [LightevalTaskConfig(name="clash", prompt_function=prompt, hf_repo="me/x",
                       hf_subset="default", metrics=[Metrics.exact_match])]
        """,
    )
    write(
        tmp_path / "yaml" / "clash.yaml",
        """\
        task: clash
        dataset_path: me/clash
        output_type: generate_until
        doc_to_text: "{{q}}"
        doc_to_target: "{{a}}"
        test_split: test
        """,
    )
    registry = Registry([tmp_path / "modules", tmp_path / "yaml"], [], None, wanted=wanted)
    assert "clash" not in registry.entries
    reason = registry.unusable["clash"].reason
    assert "clash.py" in reason and "clash.yaml" in reason and "rename one" in reason
    with pytest.raises(TaskStringError, match="clash"):
        registry.resolve("clash")


def test_an_unknown_name_gets_lm_evals_names_as_suggestions(
    lm_eval_tasks: Path, indexed: tuple[Registry, Cache]
) -> None:
    registry = Registry([lm_eval_tasks], [], None, wanted=["arc_eassy"], cache=Cache(indexed[1]))
    with pytest.raises(Exception, match="did you mean arc_easy") as raised:
        registry.resolve("arc_eassy|0")
    assert "unknown task" in str(raised.value)


def test_a_file_can_define_a_name_only_where_it_holds_it_as_a_whole_word() -> None:
    """What picks the files a run parses: `mmlu` is in `task: mmlu` and `- 'mmlu'`, not in
    `cmmlu` or `mmlu_pro` (which do not define it); names hold `.`, `-`, `(` and `)`."""
    words = _word_pattern([b"mmlu", b"arc(x).v-1"])
    for text in (b"task: mmlu\n", b"  - 'mmlu'", b"task: [mmlu, b]", b'"group": "mmlu"', b"mmlu"):
        assert words.search(text), text
    for text in (b"task: cmmlu", b"mmlu_pro", b"mmlu-pro", b"x.mmlu", b"mmlu2", b"arc(x).v-10"):
        assert not words.search(text), text
    assert words.search(b"task: arc(x).v-1\n")
