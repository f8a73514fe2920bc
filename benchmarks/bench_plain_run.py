"""Benchmark: what the installed plugin costs a pytest run that does not ask for tasks.

Every pytest start in an environment with the plugin installed loads its hooks, so a project's
ordinary test suite pays for them. Two suites, each timed with the plugin and with it blocked
(`-p no:evaltasks`), A B A B ..., compared by the median of the pair-by-pair ratios:

* a trivial suite (one test that does nothing): the plugin's fixed cost, in milliseconds;
* an open-heavy suite (tests that open a small file `--opens` times in all, and list a folder
  a tenth as often): what a per-open cost (an audit hook, say) would add, as a ratio.

Usage: `python benchmarks/bench_plain_run.py [--runs 11] [--opens 30000]`, with the interpreter
of the environment to measure and bytecode caching on. Targets: <= 20 ms on the trivial suite,
<= 1.02x on the open-heavy one.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import interleaved, median

OPEN_HEAVY = """\
import os
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.mark.parametrize("part", range(10))
def test_reads(part):
    for _ in range({per_test}):
        with open(HERE / "data.txt", encoding="utf-8") as stream:
            assert stream.read() == "row\\n"
    for _ in range({per_test} // 10):
        assert "data.txt" in os.listdir(HERE)
"""


def pytest_command(test: Path, *extra: str) -> list[str]:
    """A quiet pytest session over one test file."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test), *extra]


def write_suites(folder: Path, opens: int) -> tuple[Path, Path]:
    """The trivial test file and the open-heavy one (with the file it reads)."""
    trivial = folder / "trivial" / "test_trivial.py"
    trivial.parent.mkdir(parents=True)
    trivial.write_text("def test_nothing():\n    pass\n", encoding="utf-8")
    heavy = folder / "heavy" / "test_opens.py"
    heavy.parent.mkdir(parents=True)
    (heavy.parent / "data.txt").write_text("row\n", encoding="utf-8")
    heavy.write_text(OPEN_HEAVY.format(per_test=opens // 10), encoding="utf-8")
    return trivial, heavy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--opens", type=int, default=30_000)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="evaltasks-plain-"))
    trivial, heavy = write_suites(folder, args.opens)
    blocked = ("-p", "no:evaltasks")
    print(f"{args.runs} pairs each, interleaved, {sys.executable}")
    small = interleaved(
        pytest_command(trivial), pytest_command(trivial, *blocked), folder, args.runs
    )
    added = (small.ratio - 1) * median(small.b)
    print(small.line("trivial, plugin installed", "trivial, -p no:evaltasks"))
    print(f"plugin cost on the trivial suite: {added * 1000:+.1f} ms (ratio {small.ratio:.3f})")
    large = interleaved(pytest_command(heavy), pytest_command(heavy, *blocked), folder, args.runs)
    print(large.line(f"{args.opens:,} opens, plugin installed", "the same, -p no:evaltasks"))
    print(
        f"\ntargets: trivial <= 20 ms (got {added * 1000:.1f} ms), open-heavy <= 1.02x "
        f"(got {large.ratio:.3f}x wall, {large.cpu_ratio:.3f}x cpu)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
