"""The `--evaltasks*` command-line options and ini keys, as pytest is told of them.

Read on every pytest start, with or without `--evaltasks`, so it holds no classes and imports
nothing of the engine: a session that never asks for tasks pays only for telling pytest the
options exist. `options` turns the values into one settings object when the plugin is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest


def add_options(parser: pytest.Parser) -> None:
    """Register `--evaltasks*` options and their ini equivalents."""
    group = parser.getgroup("evaltasks", "snapshot tests of evaluation-task prompts")
    group.addoption(
        "--evaltasks",
        action="append",
        metavar="SPEC",
        help="task string (e.g. 'mmlu|5,gsm8k'), a file of task strings, or 'all' "
        "(repeatable: the values add up)",
    )
    group.addoption(
        "--evaltasks-dir",
        action="append",
        metavar="DIR",
        help="directory of task modules with a TASKS_TABLE (repeatable; default: tasks)",
    )
    group.addoption("--evaltasks-custom", action="append", metavar="FILE", help="custom task file")
    group.addoption(
        "--evaltasks-data", metavar="DIR", help="local data root (default: <first task dir>/data)"
    )
    group.addoption(
        "--evaltasks-docs", type=int, metavar="N", help="docs shown in full (default 3)"
    )
    group.addoption(
        "--evaltasks-max-samples", type=int, metavar="N", help="render only the first N docs"
    )
    group.addoption("--evaltasks-system-prompt", metavar="TEXT", help="system prompt to prepend")
    group.addoption(
        "--evaltasks-chat-template",
        metavar="NAME|PATH",
        help="also render through a chat template: a bundled name (chatml, llama3), a .jinja "
        "file, a tokenizer_config.json, or 'messages' for the chat-API message list",
    )
    group.addoption(
        "--evaltasks-fewshot-as-multiturn",
        choices=("true", "false"),
        metavar="true|false",
        help="lm-eval tasks with a chat template: few-shot examples as separate user/assistant "
        "turns (true, lm-eval's default once a chat template is applied) or one user turn",
    )
    group.addoption(
        "--evaltasks-local-only",
        action="store_true",
        help="check only the tasks whose data is in the local data root, and say how many were "
        "left out (never the default: a task left out is not checked)",
    )
    group.addoption(
        "--evaltasks-renderings",
        metavar="LIST",
        help="check every task under each rendering, each its own item and snapshot: plain, "
        "messages, a bundled template, a .jinja file or a tokenizer_config.json, each "
        "optionally with +system (e.g. 'plain chatml chatml+system')",
    )
    group.addoption(
        "--evaltasks-bos-token", metavar="TEXT", help="bos_token for a .jinja chat template"
    )
    group.addoption(
        "--evaltasks-eos-token", metavar="TEXT", help="eos_token for a .jinja chat template"
    )
    group.addoption(
        "--evaltasks-list",
        nargs="?",
        const="",
        default=None,
        metavar="FILTER",
        help="list registered tasks (a task string or name prefix narrows it) and exit; "
        "non-zero when a task module is broken",
    )
    group.addoption(
        "--evaltasks-changed",
        nargs="?",
        const="",
        default=None,
        metavar="REF",
        help="check only the tasks a change since git REF can affect (default REF: the merge "
        "base with the tracked branch, or HEAD); alone, it means --evaltasks all",
    )
    group.addoption(
        "--evaltasks-base",
        metavar="REF",
        help="judge every task also against its snapshot at git REF (the reviewed record): a "
        "change since REF without a version bump fails, whatever the working copy's file says",
    )
    group.addoption(
        "--evaltasks-report",
        metavar="PATH",
        help="write the run as Markdown to PATH (and append it to $GITHUB_STEP_SUMMARY); a PATH "
        "ending in .html gets a static HTML page with side-by-side diffs",
    )
    group.addoption(
        "--evaltasks-results",
        metavar="FILE",
        help="write every item's result and the selection as JSON to FILE (one per shard of a "
        "split run; python -m pytest_evaltasks.plugin.report merge FILE... makes one report)",
    )
    group.addoption(
        "--evaltasks-export",
        metavar="FILE",
        help="write every rendered prompt to FILE as JSON Lines, one object per doc (ids, "
        "fields, plain prompt, chat messages, chat-template text)",
    )
    group.addoption(
        "--evaltasks-show",
        nargs="?",
        const="3",
        default=None,
        metavar="N|ID,ID",
        help="print the first N docs (default 3), or the docs with these ids, of each task "
        "exactly as sent, and exit without reading or writing a snapshot",
    )
    group.addoption(
        "--evaltasks-lint",
        nargs="?",
        const="error",
        choices=LINT_MODES,
        metavar="MODE",
        help="lint the prompts: warn (the default: pytest warnings), error (failures; the "
        "mode when the option is given alone) or off",
    )
    group.addoption(
        "--evaltasks-lookahead",
        choices=LOOKAHEAD_MODES,
        metavar="MODE",
        help="auto (the default): on two or more cores, a forked process "
        "checks the last task items while the run checks the first; off: the run alone",
    )
    group.addoption(
        "--evaltasks-save-data",
        type=int,
        metavar="N",
        help="save the first N rows of every split the requested tasks read, from the Hub "
        "(or its cache) into the data root, and exit: later runs check them offline",
    )
    group.addoption(
        "--evaltasks-snapshot-dir",
        metavar="DIR",
        help="where snapshots live (default: <first task dir>/__snapshots__)",
    )
    group.addoption(
        "--evaltasks-allow-unversioned",
        action="store_true",
        help="let --snapshot-update record a prompt change without a version bump",
    )
    parser.addini(
        "evaltasks_dir",
        "task directories (relative to the ini file; lighteval:tasks and lighteval:multilingual "
        "name lighteval's installed folders)",
        type="args",
        default=[],
    )
    parser.addini("evaltasks_custom", "custom task files", type="args", default=[])
    parser.addini("evaltasks_data", "local data root", default="")
    parser.addini("evaltasks_snapshot_dir", "snapshot directory", default="")
    parser.addini("evaltasks_docs", "docs shown in full per snapshot", default="")
    parser.addini("evaltasks_lint", "prompt lint: warn, error or off", default="warn")
    parser.addini("evaltasks_lookahead", "look-ahead process: auto or off", default="auto")
    parser.addini("evaltasks_renderings", "renderings every task is checked under", default="")
    parser.addini(
        "evaltasks_lint_ignore",
        "lint rules silenced per task name pattern, one 'PATTERN RULE [RULE ...]' per line",
        type="linelist",
        default=[],
    )
    parser.addini("evaltasks_system_prompt", "system prompt to prepend", default="")
    parser.addini("evaltasks_chat_template", "chat template to render through", default="")
    parser.addini(
        "evaltasks_fewshot_as_multiturn",
        "lm-eval tasks with a chat template: few-shot examples as separate turns (true, the "
        "default) or one user turn (false)",
        default="",
    )
    parser.addini("evaltasks_bos_token", "bos_token for a .jinja chat template", default="")
    parser.addini("evaltasks_eos_token", "eos_token for a .jinja chat template", default="")
    parser.addini(
        "evaltasks_base", "git revision whose snapshots are the reviewed record", default=""
    )
    parser.addini(
        "evaltasks_changed_ignore",
        "files no task can read, one pattern per line, relative to the root directory "
        "(.gitignore-style: *.md, docs/): a change to them alone selects nothing in "
        "--evaltasks-changed runs (default: none)",
        type="linelist",
        default=[],
    )


NODE_PREFIX = "evaltasks::"
LINT_MODES = ("warn", "error", "off")
"""`--evaltasks-lint`; the first is the default (as for every mode option, see `options._mode`)."""
LOOKAHEAD_MODES = ("auto", "off")
"""`--evaltasks-lookahead` (see `lookahead`); the first is the default."""


def asks_for_tasks(option: Any, args: Sequence[str]) -> bool:
    """Whether a pytest start asks for evaluation tasks: a run over them (`--evaltasks`,
    `--evaltasks-changed`, an `evaltasks::` node id) or a command that reads them (list, show,
    save data). Only then does the plugin do anything beyond registering its options."""
    return any(
        getattr(option, name, None) is not None
        for name in (
            "evaltasks",
            "evaltasks_changed",
            "evaltasks_list",
            "evaltasks_show",
            "evaltasks_save_data",
        )
    ) or any(str(arg).startswith(NODE_PREFIX) for arg in args)


def take_node_ids(config: pytest.Config) -> list[str]:
    """Remove `evaltasks::LABEL` arguments from pytest's paths and return their labels.

    pytest would look for a file named `evaltasks`; these are our items' node ids, printed in
    every report, so a user can pass one back to rerun that task.
    """
    labels = [arg[len(NODE_PREFIX) :] for arg in config.args if arg.startswith(NODE_PREFIX)]
    if labels:
        config.args[:] = [arg for arg in config.args if not arg.startswith(NODE_PREFIX)]
    return labels
