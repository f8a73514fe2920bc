"""The plugin uses pytest's public API wherever pytest has one; what stays private is listed here,
with the reason in a comment at the place (pytest is pinned to the majors tox tests)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_evaltasks.plugin.hooks import _bar_outside_quotes

if TYPE_CHECKING:
    from conftest import EvalProject

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_evaltasks"
PRIVATE = re.compile(r"\b(?:from|import) (_pytest[\w.]*)|\bconfig\.(_[a-z]\w*)\(?")
KEPT = Counter(
    {
        # No public API configures a config without a session (pytest's --fixtures does this):
        # one call each, and the docstring that says why.
        ("plugin/commands.py", "_do_configure"): 2,
        ("plugin/commands.py", "_ensure_unconfigure"): 2,
        # No public failure representation with a crash line of our own.
        ("plugin/items.py", "_pytest._code.code"): 2,
        # syrupy's session (not pytest's), confined to the syrupy extension.
        ("snapshot/syrupy_extension.py", "_syrupy"): 1,
    }
)


def test_private_pytest_api_is_used_only_where_there_is_no_public_one() -> None:
    found: Counter[tuple[str, str]] = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        for match in PRIVATE.finditer(path.read_text(encoding="utf-8")):
            name = match.group(1) or match.group(2)
            found[(path.relative_to(PACKAGE).as_posix(), name)] += 1
    assert found == KEPT


@pytest.mark.parametrize(
    ("expression", "rewritten"),
    [
        ("anatomy|5", True),
        ("mytask:sub|1 or other|0", True),
        ("anatomy/5", False),
        ("not slow", False),
        ("name(x='a|b')", False),  # inside a string: pytest's grammar, left alone
        ('name(x="a|b") or sub|1', True),
    ],
)
def test_a_bar_is_read_as_a_slash_where_it_stands_outside_a_string(
    expression: str, rewritten: bool
) -> None:
    assert _bar_outside_quotes(expression) is rewritten


def test_the_commands_that_exit_early_print_without_the_terminal_plugin(
    project: EvalProject,
) -> None:
    (project.root / "tasks" / "broken.py").write_text("import nope_nowhere\n", encoding="utf-8")
    coloured = project.run("--evaltasks-list", "--color=yes")
    assert coloured.ret == 1
    assert "\x1b[31m" in coloured.stdout.str()  # a broken module in red, as --color says
    plain = project.run("--evaltasks-list", "-p", "no:terminal")
    assert plain.ret == 1
    text = plain.stdout.str()
    assert "mytask:sub" in text and "tasks/broken.py" in text and "\x1b[" not in text
    shown = project.run("--evaltasks", "solo", "--evaltasks-show=1", "-p", "no:terminal")
    assert shown.ret == 0
    assert "Q: question" in shown.stdout.str()


PLAIN_SESSION_MODULES = {
    "pytest_evaltasks",
    "pytest_evaltasks.plugin",
    "pytest_evaltasks.plugin.command_line",
    "pytest_evaltasks.plugin.hooks",
}
"""What a session without `--evaltasks` imports of this package: the hooks and the options they
register. Every project with the plugin installed pays for these on every pytest start, so no
settings class, engine or snapshot module belongs here."""


@pytest.mark.subprocess
def test_a_session_without_evaltasks_imports_only_the_hooks_and_their_options(
    project: EvalProject,
) -> None:
    project.pytester.makepyfile(
        test_plain="""
        import sys

        def test_loaded():
            ours = sorted(name for name in sys.modules if name.startswith("pytest_evaltasks"))
            print("LOADED", ",".join(ours))
        """
    )
    result = project.pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider", "test_plain.py")
    assert result.ret == 0
    loaded = re.search(r"LOADED (\S+)", result.stdout.str())
    assert loaded is not None
    assert set(loaded.group(1).split(",")) == PLAIN_SESSION_MODULES


def test_last_failed_reruns_the_failed_task_items_without_a_task_string(
    project: EvalProject,
) -> None:
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=3)
    project.write_tasks(edited=(1,))  # every task's doc 1 changes
    (project.root / "tasks" / "broken.py").write_text("import nope_not_here\n")
    first = project.run("--evaltasks", "all")
    first.assert_outcomes(failed=4)
    again = project.run("--lf")
    again.assert_outcomes(failed=4)
    again.stdout.fnmatch_lines(
        ["*FAILED evaltasks::mytask:sub|0*", "*FAILED evaltasks::solo|0*", "*tasks/broken.py*"]
    )
    (project.root / "tasks" / "broken.py").unlink()
    project.run("--evaltasks", "solo", "--snapshot-update", "--evaltasks-allow-unversioned")
    project.run("--evaltasks", "solo").assert_outcomes(passed=1)
    narrowed = project.run("--lf")  # solo passed since: pytest forgets it
    narrowed.assert_outcomes(failed=2)
    assert "solo" not in "".join(line for line in narrowed.outlines if "FAILED" in line)
    cache = project.root / ".pytest_cache" / "v" / "cache" / "lastfailed"
    failed = json.loads(cache.read_text(encoding="utf-8"))
    cache.write_text(json.dumps({**failed, "evaltasks::renamed_since|0": True}), encoding="utf-8")
    gone = project.run("--lf")  # a name gone since: every item is collected, not an error
    gone.assert_outcomes(failed=2)
    assert "unknown task" not in gone.stdout.str() + gone.stderr.str()
