"""Suite-wide: one line that says why tests were skipped, without `-rs`."""

from __future__ import annotations

import re
from collections import Counter

import pytest

REASONS = (
    (re.compile(r"could not import 'transformers'|'tokenizers'"), "transformers is not installed"),
    (
        re.compile(r"could not import 'lighteval'"),
        "lighteval is not installed (tox -e lighteval runs them)",
    ),
    (
        re.compile(r"could not import 'lm_eval'"),
        "lm-eval is not installed (tox -e lm-eval runs them)",
    ),
    (
        re.compile(r"realdata|real data|EVALTASKS_SHARED_DIR"),
        "the real data slices are absent (set EVALTASKS_SHARED_DIR)",
    ),
    (
        re.compile(r"chat_templates"),
        "the shared chat templates are absent (set EVALTASKS_SHARED_DIR)",
    ),
    (
        re.compile(r"lighteval is installed here"),
        "lighteval is installed (tests of running without it)",
    ),
    (re.compile(r"root reads any file"), "running as root (file permissions do not apply)"),
    (re.compile(r"could not import 'numpy'"), "numpy is not installed"),
    (re.compile(r"could not import 'pytest_split'"), "pytest-split is not installed"),
)


CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_BASE_REF", "GITHUB_HEAD_REF")
"""Variables a CI provider sets that change the plugin's decisions (a changed-only run's default
revision, where the report goes)."""


@pytest.fixture(autouse=True)
def outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts as on a developer's machine, whether or not the suite itself runs in CI;
    a test of CI behaviour sets the variables it needs."""
    for name in CI_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """`-n N` lets an idle worker take tests queued for a busy one (xdist's `worksteal`).

    xdist's default `load` schedule sends each worker a large batch ahead: the plugin's end-to-end
    tests, collected first, then land on one worker while the other finishes its quick tests and
    idles. Any `--dist` other than `load` is left as asked.
    """
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import WorkStealingScheduling

    return WorkStealingScheduling(config, log)  # type: ignore[arg-type]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name the reasons for skipped tests in one line."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    counts: Counter[str] = Counter()
    for report in skipped:
        longrepr = report.longrepr
        message = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = next((text for pattern, text in REASONS if pattern.search(message)), message[:80])
        counts[reason] += 1
    parts = ", ".join(f"{number} because {reason}" for reason, number in counts.most_common())
    terminalreporter.write_line(f"skipped {sum(counts.values())} tests: {parts}", yellow=True)
