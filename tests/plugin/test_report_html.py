"""`--evaltasks-report=PATH.html` end to end: the page a reviewer opens, checked in a real
headless browser (Chromium from the OS packages, driven by Playwright; nothing downloads a
browser). Without Chromium the browser test skips, saying how to install it, except under CI
(`CI=true`), where it fails: CI installs Chromium (`.ci/run`) and must never skip this check.
The browser test saves a screenshot to `$EVALTASKS_SCREENSHOTS` (default: its temporary
folder)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import EvalProject

HOSTILE = (
    'Q: <script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    "</td></tr></table></pre><h1>escaped?</h1>&amp; "
)
"""Task text that would run script or break the page's markup if it were not escaped."""


def _report(project: EvalProject) -> Path:
    """Record the tasks, then change two of them the same way (a doubled space and a
    zero-width space inside hostile markup) and one more doc of `solo`: the page of that
    run."""
    project.write_tasks(prefix=HOSTILE)
    project.run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=3)
    project.write_tasks(prefix=HOSTILE.replace("Q: ", "Q:  \u200b"))
    result = project.run("--evaltasks", "all", "--evaltasks-report=report.html")
    result.assert_outcomes(failed=3)
    return project.root / "report.html"


def test_the_page_is_static_escaped_and_grouped(project: EvalProject) -> None:
    text = _report(project).read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    for forbidden in ("<script", "<img", "<h1>escaped?", "http://", "https://", "<link"):
        assert forbidden not in text
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in text
    assert "3 tasks changed the same way" in text  # one block for the three
    assert text.count('class="block failed"') == 1
    assert '<span class="cp">U+200B</span>' in text
    assert '<ins><span class="ws">·</span>' in text  # the added space, made visible


def _chromium() -> str | None:
    """Chromium from the OS packages, or `$EVALTASKS_CHROMIUM`."""
    named = os.environ.get("EVALTASKS_CHROMIUM")
    if named:
        return named
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def browser_page(tmp_path: Path) -> Any:
    """A page of a headless Chromium; skipped (failed under CI) when there is none."""
    executable = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        executable = None
    if executable is None:
        message = (
            "no headless browser: install Chromium from the OS packages (apt-get install "
            "chromium) and the test extra (pip install -e '.[test]', for playwright)"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{message}; CI must run the browser test")
        pytest.skip(message)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        try:
            yield browser.new_page(viewport={"width": 1400, "height": 900})
        finally:
            browser.close()


def test_a_reviewer_sees_the_change_in_a_real_browser(
    project: EvalProject, browser_page: Any, tmp_path: Path
) -> None:
    page = browser_page
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    path = _report(project)
    page.goto(path.as_uri())

    # nothing from task text ran, loaded or broke out of its markup
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("script").count() == 0 and page.locator("img").count() == 0
    assert page.locator("h1").count() == 1
    assert requests == [path.as_uri()] and errors == []

    # the summary, then one block for the three tasks, its members listed
    assert page.locator("h1").inner_text().startswith("pytest-evaltasks: 3 items checked")
    block = page.locator(".block").first
    assert "3 tasks changed the same way" in block.locator("h3").inner_text()
    members = block.locator("ul.members li").all_inner_texts()
    assert members == ["mytask:other|0", "mytask:sub|0", "solo|0"]

    # side by side: the recorded line left, the current right, the change highlighted,
    # the zero-width space boxed as its code point and the added space a visible dot
    row = block.locator("table.diff tr", has=page.locator("ins")).first
    old, new = row.locator("td").all_inner_texts()
    assert old.startswith("| Q: <script>window.__pwned = 1</script>")
    assert new.startswith("| Q: ·U+200B<script>")  # the added space a dot, the code point
    assert row.locator("ins .cp").inner_text() == "U+200B"
    assert row.locator("ins .cp").is_visible() and row.locator("ins .ws").is_visible()

    # per-task navigation: a link in the list goes to the task, inside its group
    page.locator("nav a", has_text="solo|0").click()
    assert page.url.endswith(
        "#" + page.locator("nav a", has_text="solo|0").get_attribute("href").lstrip("#")
    )
    target = page.locator("li:target")
    assert target.inner_text() == "solo|0" and target.is_visible()
    box = target.bounding_box()
    assert box is not None and 0 <= box["y"] < 900

    folder = Path(os.environ.get("EVALTASKS_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    shot = folder / "evaltasks-report.png"
    page.goto(path.as_uri())
    page.screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
