"""The README matches the tool: its walkthrough runs as written and prints what it quotes, its
Options table lists exactly what `pytest --help` offers, and its snapshot example is a real
bundled snapshot."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs_text import blocks, section

REPO = Path(__file__).resolve().parents[2]


def readme(title: str) -> str:
    """The README's text from a `## title` heading to the next `## ` heading."""
    return section("README.md", f"## {title}")


def test_the_walkthrough_runs_as_written(pytester: pytest.Pytester) -> None:
    walk = readme("Five-minute walkthrough")
    (module,) = blocks(walk, "python")
    rows = {block.split("\n")[0].lstrip("# ").strip(): block for block in blocks(walk, "jsonl")}
    tasks = pytester.path / "tasks"
    data = tasks / "data" / "me" / "capitals" / "default"
    data.mkdir(parents=True)
    (tasks / "capitals.py").write_text(module, encoding="utf-8")
    for name, block in rows.items():
        lines = [line for line in block.split("\n") if line.strip() and not line.startswith("#")]
        (data / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    quiet = ("-p", "no:randomly", "-p", "no:hypothesispytest", "-p", "no:anyio")

    def run(*args: str) -> pytest.RunResult:
        return pytester.runpytest_subprocess(*quiet, *args)

    run("--evaltasks", "capitals|2", "--snapshot-update").assert_outcomes(passed=1)
    written = re.search(r"writes\s+`tasks/__snapshots__/([^`]+)`", walk)
    assert written is not None
    assert (tasks / "__snapshots__" / written.group(1)).is_file()

    path = tasks / "capitals.py"
    path.write_text(path.read_text().replace('"Q: What', '"Question: What'), encoding="utf-8")
    changed = run("--evaltasks", "capitals|2")
    changed.assert_outcomes(failed=1)
    (quoted,) = [b for b in blocks(walk) if b.startswith("capitals|2:")]
    assert quoted.strip() in changed.stdout.str()
    refused = run("--evaltasks", "capitals|2", "--snapshot-update")
    assert "the update is refused: bump the task's" in refused.stdout.str()

    path.write_text(path.read_text().replace("version=0", "version=1"), encoding="utf-8")
    review = run("--evaltasks", "capitals|2")
    review.assert_outcomes(failed=1)
    step4 = re.search(r"\(`(capitals\|2: 4 of 4 docs changed.*?)`\)", walk, re.DOTALL)
    assert step4 is not None
    assert " ".join(step4.group(1).split()) in review.stdout.str()
    run("--evaltasks", "capitals|2", "--snapshot-update").assert_outcomes(passed=1)
    run("--evaltasks", "capitals|2").assert_outcomes(passed=1)


def help_text() -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--help", "-p", "no:randomly"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    return done.stdout


def test_the_options_table_is_what_pytest_help_offers() -> None:
    text = help_text()
    options = set(re.findall(r"^\s+(--evaltasks[\w-]*)", text, re.MULTILINE))
    ini = set(re.findall(r"^\s+(evaltasks_\w+) \(", text, re.MULTILINE))
    table = readme("Options")
    rows = [line for line in table.split("\n") if line.startswith(("| `", "| | `"))]
    documented = {m.group(1) for row in rows if (m := re.match(r"\| `(--[\w-]+)", row))}
    documented_ini = set(re.findall(r"`(evaltasks_\w+)`", "\n".join(rows)))
    assert options and ini
    assert options - documented == set(), "options missing from the README's table"
    assert {o for o in documented if o.startswith("--evaltasks")} - options == set()
    assert ini - documented_ini == set(), "ini keys missing from the README's table"
    assert documented_ini - ini == set()


def test_the_snapshot_example_is_a_bundled_snapshot() -> None:
    snap = readme("What a snapshot looks like")
    name = re.search(r"`(tasks/__snapshots__/[^`]+\.txt)`", snap)
    assert name is not None
    (example,) = blocks(snap)[:1]
    shown = example.split("\n...")[0]
    real = (REPO / name.group(1)).read_text(encoding="utf-8")
    assert real.startswith(shown)
