"""pytest's entry point into the plugin: the options, and a session only when one is asked for.

Every pytest start in an environment with the plugin installed loads this module, so it does
three cheap things and nothing else: it tells pytest the `--evaltasks*` options exist, it runs
the early-exit commands (`--evaltasks-list`, `--evaltasks-show`, `--evaltasks-save-data`) when
asked, and, only when a run asks for tasks, it starts observing file opens and registers an
`EvalTasksSession` (`session`), whose own hooks do the work. A run that asks for no tasks imports
nothing of the engine or the snapshot layer and installs no audit hook.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from .command_line import add_options, asks_for_tasks, take_node_ids

SESSION_PLUGIN = "evaltasks-session"
"""The name a session's `EvalTasksSession` is registered under."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the `--evaltasks*` options and their ini keys."""
    add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: Sequence[str]
) -> None:
    """A run that asks for tasks observes which files code opens from before the first
    `conftest.py` is imported (one may import a helper that reads a template): what a task
    reads is what changed-only runs select it by."""
    if asks_for_tasks(early_config.known_args_namespace, args):
        from ..engine.inputs import install, set_project

        set_project(early_config.rootpath)
        install()


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """`--evaltasks-list`, `--evaltasks-show` and `--evaltasks-save-data` do their job and exit
    before any collection."""
    option = config.option
    asked = (option.evaltasks_list, option.evaltasks_show, option.evaltasks_save_data)
    if all(value is None for value in asked):
        return None
    from .commands import command_of, run_command

    return run_command(config, command_of(config))


def pytest_configure(config: pytest.Config) -> None:
    """Start a session when the run asks for tasks; validate everything before collection, so
    mistakes are usage errors (exit code 4)."""
    config.addinivalue_line("markers", "evaltask: a snapshot check of one evaluation task")
    node_ids = take_node_ids(config)
    option = config.option
    asked = option.evaltasks is not None or option.evaltasks_changed is not None or node_ids
    if not asked and not _rerun_last_failed(config):
        return
    if option.evaltasks_save_data is not None or option.evaltasks_show is not None:
        return
    _allow_bars_in_keywords(config)
    if not config.pluginmanager.has_plugin("syrupy"):
        raise pytest.UsageError(
            "--evaltasks needs syrupy's pytest plugin, which is disabled here (-p no:syrupy); "
            "remove that option"
        )
    from .options import resolve_options
    from .session import EvalTasksSession

    options = resolve_options(config, node_ids)
    if options.problems:
        raise pytest.UsageError("\n".join(options.problems))
    session = EvalTasksSession.start(config, options)
    config.pluginmanager.register(session, SESSION_PLUGIN)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """A run without tasks that selects `-m evaltask`: say how task items come to exist."""
    if config.pluginmanager.has_plugin(SESSION_PLUGIN):
        return
    if "evaltask" in (config.option.markexpr or ""):
        terminalreporter.line(
            "evaltasks: task items exist only with --evaltasks: "
            'pytest --evaltasks all -m evaltask (or --evaltasks "mmlu|5", ...)',
            yellow=True,
        )


def _allow_bars_in_keywords(config: pytest.Config) -> None:
    """`-k "anatomy|5"`: `|` is not allowed in pytest's keyword expressions (neither in a name
    nor as an operator, pytest 8 and 9), so where one stands outside a quoted string, read `|`
    as `/`, under which each item's name is also a keyword (`-k "anatomy/5"` is the documented
    form). Decided from the text alone: pytest has no public API to parse an expression."""
    keyword = config.option.keyword
    if keyword and _bar_outside_quotes(keyword):
        config.option.keyword = keyword.replace("|", "/")


def _bar_outside_quotes(expression: str) -> bool:
    """Whether a `|` stands outside the `'...'` and `"..."` strings of an expression."""
    quote = ""
    for char in expression:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "|":
            return True
    return False


def _rerun_last_failed(config: pytest.Config) -> bool:
    """`pytest --lf` after a run whose task items failed: ask for their tasks again (pytest's
    last-failed filter keeps the failed items). Whether it did."""
    cache = getattr(config, "cache", None)
    if not getattr(config.option, "lf", False) or cache is None:
        return False
    from .command_line import NODE_PREFIX
    from .plan import last_failed_specs

    specs = last_failed_specs(cache.get("cache/lastfailed", {}), NODE_PREFIX)
    if specs:
        config.option.evaltasks = specs
        config.option.evaltasks_last_failed = True
    return bool(specs)
