"""Changed-only selection's decisions, in-process: the ignore list, claims, how each changed
path is classified, and the rule that a task is left out only when no changed path can affect
it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_evaltasks.plugin.changes import Changes, RunConfiguration, choose, classify
from pytest_evaltasks.plugin.claims import Claim, Claims
from pytest_evaltasks.plugin.ignore_list import NOTHING, IgnoreList

ROOT = Path(os.sep, "work", "project")


@pytest.mark.parametrize(
    ("pattern", "path", "matched"),
    [
        ("*.md", "README.md", True),
        ("*.md", "docs/guide/intro.md", True),
        ("*.md", "README.mdx", False),
        ("docs/", "docs/a.txt", True),
        ("docs/", "site/docs/a.txt", True),
        ("docs/", "docs", False),  # a folder pattern: files below it
        ("/docs/", "site/docs/a.txt", False),
        ("docs", "docs/a.txt", True),
        ("site/index.html", "site/index.html", True),
        ("site/index.html", "x/site/index.html", False),
        ("docs/**/*.png", "docs/a/b/c.png", True),
        ("docs/**/*.png", "docs/c.png", True),
        ("docs/**/*.png", "docs/c.jpg", False),
        ("../web/", "../web/app.js", True),
        ("LICENSE*", "LICENSE.txt", True),
        ("[Rr]eadme.md", "readme.md", True),
        ("?.txt", "ab.txt", False),
        ("tasks/*.txt", "tasks/notes.txt", True),
        ("tasks/*.txt", "tasks/deep/notes.txt", False),
    ],
)
def test_ignore_patterns_read_as_gitignore_does(pattern: str, path: str, matched: bool) -> None:
    found = IgnoreList.parse([pattern]).matches(path)
    assert (found == pattern) is matched


def test_ignore_lines_skip_blanks_and_comments_and_refuse_what_they_cannot_mean() -> None:
    assert IgnoreList.parse(["", "# docs", "  *.md  "]).patterns == ("*.md",)
    with pytest.raises(ValueError, match=r"'!README.md': negated patterns are not supported"):
        IgnoreList.parse(["!README.md"])
    with pytest.raises(ValueError, match="write it relative to the root directory"):
        IgnoreList.parse(["C:/project/docs"])


def test_a_claimed_folder_claims_what_is_below_it_through_links(tmp_path: Path) -> None:
    real = tmp_path / "shared"
    (real / "sub").mkdir(parents=True)
    (tmp_path / "linked").symlink_to(real)
    claims = Claims()
    claims.add(str(tmp_path / "linked") + os.sep, Claim("t", " (its data)"))
    claims.add(str(tmp_path / "one.txt"), Claim("u"))
    assert set(claims.of(str(real / "sub" / "x.json"))) == {Claim("t", " (its data)")}
    assert set(claims.of(str(tmp_path / "one.txt"))) == {Claim("u")}
    assert claims.of(str(tmp_path / "two.txt")) == {}
    # a changed folder (a submodule) meets every claim below it
    assert set(claims.of(str(tmp_path), is_folder=True)) == {Claim("t", " (its data)"), Claim("u")}


def test_run_configuration_holds_loaded_files_conftests_and_pytest_s_candidates() -> None:
    loaded = ROOT / "ci" / "ci.ini"
    config = RunConfiguration.of([loaded], [ROOT / "tasks"])
    assert config.configures(str(loaded)) == "it configures the run"
    assert config.configures(str(ROOT / "deep" / "conftest.py")) is not None
    assert config.configures(str(ROOT / "pyproject.toml")) is not None  # above the folder
    assert config.configures(str(ROOT / "tasks" / "pytest.ini")) is not None
    assert config.configures(str(ROOT / "tasks" / "sub" / "pytest.ini")) is None
    assert config.configures(str(ROOT / "tasks" / "mmlu.py")) is None


def _decide(
    changed: list[str],
    claims: Claims,
    names: list[str],
    ignore: IgnoreList = NOTHING,
    configuration: RunConfiguration | None = None,
    unrecorded: dict[str, str] | None = None,
) -> Changes:
    changes = Changes("main", set())
    classify(
        changes,
        [str(ROOT / path) for path in changed],
        frozenset(),
        configuration or RunConfiguration.of([], [ROOT]),
        claims,
        ignore,
        ROOT,
    )
    return choose(changes, names, claims, unrecorded or {})


def test_each_kind_of_changed_path_selects_as_documented() -> None:
    claims = Claims()
    claims.add(str(ROOT / "tasks" / "a.py"), Claim("a"))
    claims.add(str(ROOT / "tasks" / "b.py"), Claim("b"))
    claims.add(str(ROOT / "tasks" / "README.md"), Claim("b"))
    names = ["a", "b", "c"]
    assert set(_decide(["tasks/a.py"], claims, names).selected) == {"a"}
    assert set(_decide(["notes.txt"], claims, names).selected) == {"a", "b", "c"}
    ignore = IgnoreList.parse(["*.md", "*.txt", "pytest.ini"])
    assert set(_decide(["notes.txt"], claims, names, ignore).selected) == set()
    # claimed: never ignored
    assert set(_decide(["tasks/README.md"], claims, names, ignore).selected) == {"b"}
    # configuring: never ignored, every task
    assert set(_decide(["pytest.ini"], claims, names, ignore).selected) == {"a", "b", "c"}
    # a task with no record, whatever changed; one that started a process, when it mattered
    claims.add_everything("c", "its code started another process")
    decided = _decide(["notes.txt"], claims, names, ignore, unrecorded={"a": "no snapshot"})
    assert set(decided.selected) == {"a"}
    assert set(_decide(["tasks/b.py"], claims, names, ignore).selected) == {"b", "c"}


PATHS = st.sampled_from(
    ["tasks/a.py", "tasks/b.py", "tasks/data/x.jsonl", "README.md", "docs/x.md", "notes.txt",
     "pytest.ini", "sub/conftest.py", "tasks/shared.py"]
)  # fmt: skip
TASKS = ["a", "b", "c", "d"]


@settings(max_examples=300, deadline=None)
@given(
    claimed=st.dictionaries(PATHS, st.sets(st.sampled_from(TASKS), max_size=2), max_size=6),
    changed=st.sets(PATHS, min_size=1, max_size=4),
    ignored=st.sets(st.sampled_from(["*.md", "docs/", "notes.txt", "*.ini"]), max_size=3),
)
def test_a_task_is_left_out_only_when_no_changed_path_can_affect_it(
    claimed: dict[str, set[str]], changed: set[str], ignored: set[str]
) -> None:
    """For any claims and changes: a task is left out exactly when every changed path is
    claimed by other tasks only, or is ignored and claimed by nobody, and none configures the
    run."""
    claims = Claims()
    for path, tasks in claimed.items():
        for task in tasks:
            claims.add(str(ROOT / path), Claim(task))
    ignore = IgnoreList.parse(sorted(ignored))
    selected = set(_decide(sorted(changed), claims, TASKS, ignore).selected)
    configuration = RunConfiguration.of([], [ROOT])
    for task in TASKS:
        could_affect = False
        for path in changed:
            owners = claimed.get(path, set())
            if configuration.configures(str(ROOT / path)):
                could_affect = True
            elif owners:
                could_affect = could_affect or task in owners
            elif ignore.matches(path) is None:
                could_affect = True
        assert (task in selected) is could_affect, (task, changed, claimed, ignored)


def test_a_selection_of_nothing_names_what_changed() -> None:
    claims = Claims()
    claims.add(str(ROOT / "tasks" / "b.py"), Claim("b"))
    decided = _decide(["tasks/b.py"], claims, ["a"])
    assert decided.describe() == (
        "0 tasks changed since main: nothing to check (tasks/b.py changed, read only by tasks "
        "not asked for: b)"
    )
    nothing = _decide([], claims, ["a"])
    assert nothing.describe() == "0 tasks changed since main: nothing to check (no file changed)"
