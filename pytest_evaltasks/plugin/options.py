"""Command-line and ini options (registered in `command_line`), resolved into one plain
settings object.

CLI paths are relative to the directory pytest was started in, ini paths to the ini file's
directory, the default task folder to the project's root (`root`: pytest's rootdir unless pytest
derived it from an option's value).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ..engine.ports import PORTS_FILE
from ..engine.run_settings import RunSettings
from .command_line import LINT_MODES, LOOKAHEAD_MODES
from .ignore_list import INI_KEY as IGNORE_KEY
from .ignore_list import NOTHING, IgnoreList
from .profiles import parse_keys
from .root import meant_root


@dataclass(frozen=True)
class Options:
    """Everything the plugin needs from the command line and the ini file."""

    specs: list[str]
    """Every `--evaltasks` value (the option may repeat), or node ids given as arguments."""
    task_dirs: list[Path]
    custom_tasks: list[Path]
    data_dir: Path
    snapshot_dir: Path
    run: RunSettings
    list_tasks: bool = False
    allow_unversioned: bool = False
    update: bool = False
    lint: str = "warn"
    lookahead: str = "auto"
    """`--evaltasks-lookahead`: auto or off (see `lookahead`)."""
    changed: str | None = None
    """`--evaltasks-changed`: a git revision, "" for the default one, None when not given."""
    report: Path | None = None
    export: Path | None = None
    """`--evaltasks-export`: the JSON Lines file every rendered prompt is written to."""
    results: Path | None = None
    """`--evaltasks-results`: the JSON file of every item's result and the selection facts (one
    per shard; `python -m pytest_evaltasks.plugin.report merge` makes them one report)."""
    warn_unused: bool = False
    """syrupy's `--snapshot-warn-unused`: an orphan snapshot warns instead of failing."""
    update_new_only: bool = False
    """syrupy's `--snapshot-update-new-only`: record the tasks that have no snapshot yet, and
    check every other one as a compare run does."""
    no_cleanup: bool = False
    """syrupy's `--snapshot-no-cleanup`: `--snapshot-update` keeps orphan snapshots (each a
    warning) instead of deleting them."""
    disable_unused: bool = False
    """syrupy's `--snapshot-disable-unused`: no orphan snapshot is looked for."""
    ports_file: Path | None = None
    """Where the project declares its ports (`engine/ports`): `ports.toml` beside its task
    modules (the folder its data and snapshots default to)."""
    details: bool = False
    """syrupy's `--snapshot-details`: the summary lists every item's snapshot and outcome."""
    lint_ignore: list[tuple[str, list[str]]] = field(default_factory=list)
    """`evaltasks_lint_ignore` ini lines: (task name pattern, rules) silenced for matching tasks
    (for task files the user cannot edit, such as lighteval's own)."""
    local_only: bool = False
    """`--evaltasks-local-only`: check only the tasks whose data is in the local data root."""
    renderings: list[str] | None = None
    """`evaltasks_renderings`: rendering keys, in order; None: one rendering, as the chat template
    and system prompt options say."""
    tokens: tuple[str | None, str | None] = (None, None)
    """`bos_token` and `eos_token` for `.jinja` chat templates (None: from a
    `tokenizer_config.json` beside the template, else empty)."""
    template_source: str | None = None
    """The chat template as loaded (a bundled name or an absolute path), for a fresh process."""
    base: str | None = None
    """`--evaltasks-base`: the git revision whose snapshots are the reviewed record."""
    problems: list[str] = field(default_factory=list)
    last_failed: bool = False
    """`pytest --lf` chose the task strings (the tasks of the items that failed last)."""
    node_ids: list[str] = field(default_factory=list)
    """`evaltasks::LABEL` arguments: with `--evaltasks`, only these items run."""
    root: Path = Path()
    """The project's root (`root.meant_root`): pytest's rootdir, unless pytest took an
    option's value for a test path."""
    root_note: str | None = None
    """Why the root is not pytest's rootdir (said in the header); None when it is."""
    changed_ignore: IgnoreList = NOTHING
    """`evaltasks_changed_ignore`: the files declared irrelevant to every task (a change to
    one alone checks nothing)."""

    @property
    def spec(self) -> str | None:
        """The task strings as one text, for messages (None without `--evaltasks`)."""
        return " + ".join(self.specs) if self.specs else None


def resolve_options(config: pytest.Config, node_ids: list[str] | None = None) -> Options:
    """Read options and ini values into absolute paths and typed settings.

    Path options are given as `--evaltasks-snapshot-dir=DIR`: in the space form pytest may take
    the value for a test path when it chooses its rootdir and ini file.
    """
    cwd = config.invocation_params.dir
    root, root_note = meant_root(config)
    ini_dir = config.inipath.parent if config.inipath else root
    opt = config.option
    problems: list[str] = []
    task_dirs = _task_dirs(cwd, opt.evaltasks_dir, problems) or _task_dirs(
        ini_dir, list(config.getini("evaltasks_dir")), problems
    )
    custom = _paths(cwd, opt.evaltasks_custom) or _paths(
        ini_dir, list(config.getini("evaltasks_custom"))
    )
    if not task_dirs and not (custom and not (root / "tasks").is_dir()):
        task_dirs = [root / "tasks"]  # the default: the root directory's, wherever pytest runs
    data_dir = _one_path(cwd, opt.evaltasks_data) or _one_path(
        ini_dir, config.getini("evaltasks_data")
    )
    snapshot_dir = _one_path(cwd, opt.evaltasks_snapshot_dir) or _one_path(
        ini_dir, config.getini("evaltasks_snapshot_dir")
    )
    docs = _count(opt.evaltasks_docs, config.getini("evaltasks_docs"), "evaltasks_docs", problems)
    max_samples = opt.evaltasks_max_samples
    if max_samples is not None and max_samples < 1:
        problems.append(f"--evaltasks-max-samples must be at least 1, got {max_samples}")
    base = opt.evaltasks_base or str(config.getini("evaltasks_base")).strip() or None
    if max_samples is not None and base is not None:
        problems.append(_partial_against_base(config))
    home = _home(task_dirs, custom, root)
    data_dir = data_dir or home / "data"
    snapshot_dir = snapshot_dir or home / str(getattr(opt, "snapshot_dirname", "__snapshots__"))
    for option, path in (
        ("--evaltasks-snapshot-dir", snapshot_dir),
        ("--evaltasks-data", data_dir),
    ):
        if path.exists() and not path.is_dir():
            problems.append(f"{option}: {path} is a file, not a directory; name a directory")
    system_prompt = opt.evaltasks_system_prompt
    if system_prompt is None:
        system_prompt = str(config.getini("evaltasks_system_prompt")) or None
    chat_template = opt.evaltasks_chat_template or str(config.getini("evaltasks_chat_template"))
    rendering_text = opt.evaltasks_renderings or str(config.getini("evaltasks_renderings"))
    renderings = parse_keys(rendering_text) if rendering_text.strip() else None
    if renderings is not None and chat_template:
        problems.append(
            "--evaltasks-renderings and --evaltasks-chat-template (or their ini keys) exclude "
            "each other: list the template among the renderings"
        )
    tokens = (
        opt.evaltasks_bos_token or str(config.getini("evaltasks_bos_token")) or None,
        opt.evaltasks_eos_token or str(config.getini("evaltasks_eos_token")) or None,
    )
    if system_prompt is not None and not _is_text(system_prompt):
        problems.append(
            "--evaltasks-system-prompt holds bytes that are not UTF-8 text; pass the prompt as "
            "UTF-8 (check the terminal's or the shell script's encoding)"
        )
    ids = list(node_ids or [])
    try:
        ignore = IgnoreList.parse(list(config.getini(IGNORE_KEY)))
    except ValueError as exc:
        problems.append(str(exc))
        ignore = NOTHING
    lint = _mode(opt.evaltasks_lint, config, "evaltasks_lint", LINT_MODES, problems)
    lookahead = _mode(
        opt.evaltasks_lookahead, config, "evaltasks_lookahead", LOOKAHEAD_MODES, problems
    )
    return Options(
        specs=list(opt.evaltasks or [])
        or (["all"] if opt.evaltasks_changed is not None and not ids else []),
        task_dirs=[Path(p) for p in task_dirs],
        custom_tasks=[Path(p) for p in custom],
        ports_file=home / PORTS_FILE,
        data_dir=data_dir,
        snapshot_dir=snapshot_dir,
        run=RunSettings(
            system_prompt=system_prompt,
            chat_template=chat_template or None,
            fewshot_as_multiturn=_multiturn(opt, config, problems),
            docs_shown=docs,
            max_samples=max_samples,
        ),
        list_tasks=opt.evaltasks_list is not None,
        allow_unversioned=bool(opt.evaltasks_allow_unversioned),
        update=bool(getattr(opt, "update_snapshots", False)),
        lint=lint,
        lookahead=lookahead,
        changed=opt.evaltasks_changed,
        report=_one_path(cwd, opt.evaltasks_report),
        export=_one_path(cwd, opt.evaltasks_export),
        results=_one_path(cwd, opt.evaltasks_results),
        warn_unused=bool(getattr(opt, "warn_unused_snapshots", False)),
        update_new_only=bool(getattr(opt, "update_new_snapshots_only", False)),
        no_cleanup=bool(getattr(opt, "no_cleanup", False)),
        disable_unused=bool(getattr(opt, "disable_unused_snapshots", False)),
        details=bool(getattr(opt, "include_snapshot_details", False)),
        renderings=renderings,
        tokens=tokens,
        lint_ignore=_lint_ignores(list(config.getini("evaltasks_lint_ignore")), problems),
        local_only=bool(opt.evaltasks_local_only),
        base=base,
        problems=problems,
        node_ids=ids,
        last_failed=getattr(opt, "evaltasks_last_failed", False),
        root=root,
        root_note=root_note,
        changed_ignore=ignore,
    )


def _partial_against_base(config: pytest.Config) -> str:
    """Why `--evaltasks-max-samples` and `--evaltasks-base` exclude each other, naming where
    the former was set (a partial run cannot show that a task is unchanged since the base)."""
    added = any("--evaltasks-max-samples" in str(arg) for arg in config.getini("addopts"))
    where = " (set in addopts, in the ini file)" if added else ""
    return (
        f"--evaltasks-max-samples{where} checks only the first docs of each task, and "
        f"--evaltasks-base judges every task against the reviewed record: every doc must be "
        f"checked against it; remove --evaltasks-max-samples"
    )


def _lint_ignores(lines: list[str], problems: list[str]) -> list[tuple[str, list[str]]]:
    """`evaltasks_lint_ignore` lines as (pattern, rules); unknown rules are a usage error."""
    from ..lint.rules import RULES

    found: list[tuple[str, list[str]]] = []
    for line in lines:
        parts = line.replace(",", " ").split()
        if len(parts) < 2:
            problems.append(
                f"evaltasks_lint_ignore (ini): {line!r} is not 'PATTERN RULE [RULE ...]'"
            )
            continue
        unknown = [rule for rule in parts[1:] if rule not in RULES]
        if unknown:
            problems.append(
                f"evaltasks_lint_ignore (ini): unknown rule(s) {', '.join(unknown)} in {line!r} "
                f"(known: {', '.join(RULES)})"
            )
            continue
        found.append((parts[0], parts[1:]))
    return found


def _mode(
    given: str | None, config: pytest.Config, ini: str, modes: tuple[str, ...], problems: list[str]
) -> str:
    """A mode option: the command line's value, else the ini key's, else the first of `modes`
    (the default); an unknown ini value is a problem (the command line's choices are pytest's
    to check)."""
    value = given or str(config.getini(ini)).strip() or modes[0]
    if value not in modes:
        problems.append(f"{ini} (ini) must be one of {', '.join(modes)}, got {value!r}")
    return value


def _multiturn(opt: object, config: pytest.Config, problems: list[str]) -> bool:
    """`--evaltasks-fewshot-as-multiturn` (or its ini key): lm-eval's `fewshot_as_multiturn`,
    true unless set to false."""
    value = (
        getattr(opt, "evaltasks_fewshot_as_multiturn", None)
        or str(config.getini("evaltasks_fewshot_as_multiturn")).strip().lower()
    )
    if value in ("", "true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    problems.append(f"evaltasks_fewshot_as_multiturn (ini) must be true or false, got {value!r}")
    return True


def _is_text(value: str) -> bool:
    """Encodable as UTF-8: argv bytes that are not UTF-8 arrive as lone surrogates."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


SHORTCUTS = {
    "lighteval:tasks": ("tasks", "tasks"),
    "lighteval:multilingual": ("tasks", "multilingual", "tasks"),
    "lm_eval:tasks": ("tasks",),
    "inspect_evals:tasks": (),
}
"""Task folders named by shortcut: lighteval's and lm-eval's installed ones (the package is
the part before the colon)."""

SHORTCUT_INSTALL = {
    "lighteval": "install it (see docs/lighteval-in-place.md)",
    "lm_eval": "install it (pip install -e '.[lm-eval]' from this package's clone, see "
    "docs/lm-eval.md)",
    "inspect_evals": "install it (pip install -e '.[inspect]' from this package's clone, see "
    "docs/inspect.md)",
}


def task_folder(base: Path, value: str) -> Path:
    """One task folder, a shortcut (`lm_eval:tasks`) or a path against `base`; one that cannot
    be found is an error saying what to install or name."""
    from ..errors import RegistryError

    problems: list[str] = []
    found = _task_dirs(base, [value], problems)
    if problems or not found:
        raise RegistryError("; ".join(problems) or f"{value}: not a folder")
    return found[0]


def _task_dirs(base: Path, values: list[str] | None, problems: list[str]) -> list[Path]:
    """Task folders made absolute against `base`, shortcuts resolved."""
    found: list[Path] = []
    for value in values or []:
        parts = SHORTCUTS.get(value)
        if parts is None:
            found.append((base / value).resolve())
            continue
        package = value.split(":")[0]
        installed = _installed_folder(package)
        if installed is None:
            problems.append(
                f"{value}: {package} is not installed here; {SHORTCUT_INSTALL[package]} or name "
                f"the folder"
            )
            continue
        found.append(installed.joinpath(*parts))
    return found


def _installed_folder(package: str) -> Path | None:
    """An installed package's folder, found without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    return Path(locations[0]) if locations else None


def _home(task_dirs: list[Path], custom: list[Path], root: Path) -> Path:
    """Where data and snapshots live by default: the first task folder, unless it is an
    installed package's (then the root's `tasks/`: nothing is written into site-packages), or
    the first custom file's folder when there is no task folder."""
    if task_dirs:
        first = task_dirs[0]
        from ..engine.inputs import installed_file

        installed = installed_file(str(first), str(root))
        return root / "tasks" if installed else first
    return custom[0].parent if custom else root / "tasks"


def _paths(base: Path, values: list[str] | None) -> list[Path]:
    """CLI paths made absolute against the invocation directory."""
    return [(base / value).resolve() for value in values or []]


def _one_path(base: Path, value: str | None) -> Path | None:
    """One optional path made absolute against `base`."""
    return (base / value).resolve() if value else None


def _count(cli: int | None, ini: str, name: str, problems: list[str]) -> int | None:
    """A non-negative count from the CLI, else the ini file."""
    raw: object = cli if cli is not None else (ini or None)
    if raw is None:
        return None
    where = f"--{name.replace('_', '-')}" if cli is not None else f"{name} (ini)"
    try:
        value = int(str(raw))
    except ValueError:
        problems.append(f"{where} must be a whole number, got {raw!r}")
        return None
    if value < 0:
        problems.append(f"{where} must be 0 or more, got {value}")
        return None
    return value
