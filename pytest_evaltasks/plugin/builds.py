"""Building a task item's snapshot: in this process, or in a fresh one under a chosen
PYTHONHASHSEED.

A change that only one process sees is not a change. Before the gate blames the version, or
records new content, the check (`snapshot.check`) asks for the same task built in a fresh
interpreter: `python -m pytest_evaltasks.plugin.builds` reads a job on stdin, imports only the
task's own module, builds every planned task of that module, and writes their facts, texts and
lint findings as JSON. The results are kept per module, so a one-word edit of a module of 57
tasks costs one fresh process, not 57.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.rendered import Upstream
from ..engine.run_settings import RunSettings
from ..snapshot.built import BuiltSnapshot, Reads, build_snapshot
from ..snapshot.check import FreshBuildError
from ..snapshot.facts import SnapshotFacts
from .profiles import split_item_name

if TYPE_CHECKING:
    from ..engine.chat_template import ChatTemplate
    from ..engine.inputs import InputRecorder
    from ..engine.registry import Registry
    from ..engine.rendered import RenderedTask
    from ..engine.task_string import TaskRequest
    from .profiles import Rendering

TIMEOUT = 600.0
"""Seconds a fresh process may take to build one task."""

MAX_ALIVE = 2
"""Fresh processes kept alive at once (a module's next task reuses its process): the least
recently used is ended when another starts. One that imported lm-eval holds about 400 MB, so a
run over many tasks keeps its memory bounded; items run module by module, so a process is seldom
needed again once ended (it is then started again)."""


def build_here(
    registry: Registry,
    request: TaskRequest,
    run: RunSettings,
    template: ChatTemplate | None,
    root: Path,
    within: Path | None = None,
    hash_seed: int | None = None,
    label: str | None = None,
) -> BuiltSnapshot:
    """One task rendered by its source and fingerprinted in this process: what every item and
    fresh process does, so both build alike.

    Everything the build reads is recorded as its inputs, relative to the root (`within` is
    the folder project files live in: the git checkout, or the root): what its code reads at
    import and while it renders (a prompt function's first call included), what this package
    reads for it (its rows, the images its docs name, as they are fingerprinted), the files its
    source knows it reads and the chat template's files. Its caches are private to the build
    (`Registry.render`), so a warm cache reads what a cold one does."""
    from ..engine.collection import checkpoint
    from ..engine.inputs import InputRecorder

    with InputRecorder() as seen:
        rendered = registry.render(request, run, template)
        checkpoint(rendered.size)
        return build_snapshot(
            rendered,
            run,
            template,
            root,
            hash_seed,
            lambda: _inputs(registry, request.name, rendered, template, seen, root, within),
            label,
        )


def _inputs(
    registry: Registry,
    name: str,
    rendered: RenderedTask,
    template: ChatTemplate | None,
    seen: InputRecorder,
    root: Path,
    within: Path | None,
) -> Reads:
    """A finished build's reads (see `Reads`), as records name them."""
    from ..engine.inputs import inputs_of, recorded_input

    base = within or root
    known = {path for path in rendered.inputs if _present(path)}
    if template is not None:
        known |= {path for path in template.files if _present(path)}
    modules, files = set(seen.modules), set(seen.files) | known
    own = inputs_of(modules, files, base, follow_opened=False)
    own |= registry.imported_inputs(name, base, follow_opened=False)
    recorded = own | inputs_of(modules, files, base) | registry.imported_inputs(name, base)
    if rendered.caches:
        caches = tuple(os.path.join(os.path.abspath(c), "") for c in rendered.caches)
        own = {path for path in own if not path.startswith(caches)}
        recorded = {path for path in recorded if not path.startswith(caches)}
    return Reads(
        tuple(recorded_input(path, root) for path in recorded),
        tuple(recorded_input(path, root) for path in own),
    )


def _present(path: str) -> bool:
    """A known input that exists: a file, or a listed folder (ending with a separator)."""
    return os.path.isdir(path) if path.endswith(os.sep) else os.path.isfile(path)


def lint_of(
    registry: Registry,
    built: BuiltSnapshot,
    name: str,
    hash_seed_dependent: bool,
    ini_ignores: list[tuple[str, list[str]]],
) -> list[str]:
    """A build's lint findings as lines, with the ignores of the task's own files and of the
    ini file."""
    from ..lint.rules import lint_lines

    own, where = registry.lint_ignores(name)
    return lint_lines(built.rendered, own, where, name, hash_seed_dependent, ini_ignores)


def current_hash_seed() -> int | None:
    """This process's PYTHONHASHSEED; None when hashes are randomised."""
    value = os.environ.get("PYTHONHASHSEED", "random")
    return int(value) if value.isdigit() else None


def other_seed() -> int:
    """A hash seed that differs from this process's: 0, or 1 when this process runs under 0."""
    return 1 if current_hash_seed() == 0 else 0


@dataclass(frozen=True)
class FreshBuild:
    """A task built in a fresh process: its facts and the docs it shows in full, from which
    its file is laid out here as that process would have laid it out."""

    facts: SnapshotFacts
    older: dict[int, SnapshotFacts]
    """The same build's facts in the older formats asked for (to verify files in them)."""
    size: int
    partial: bool
    docs_shown: int
    blocks: dict[str, str]
    """The docs shown in full, by label, in order."""
    lint: list[str]
    upstream: Upstream | None = None
    reads: tuple[str, ...] = ()
    """What the fresh build itself read (`BuiltSnapshot.reads`)."""

    def facts_in(self, format_version: int) -> SnapshotFacts:
        """The facts in the format a record was written in."""
        if format_version == self.facts.format_version:
            return self.facts
        if format_version not in self.older:
            raise FreshBuildError(
                f"format {format_version}'s facts were not asked of the fresh process"
            )
        return self.older[format_version]

    def text(self, docs_shown: int) -> str:
        """The whole file, laid out as the fresh process would have, for the docs shown that
        were asked for."""
        from ..snapshot.layout import layout

        return layout(self.facts, self.docs_shown, list(self.blocks.values()))

    def shown_text(self, docs_shown: int) -> str:
        """The docs shown in full."""
        return "".join(f"\n{block}\n" for block in self.blocks.values())

    def block_of(self, label: str) -> str | None:
        """One doc in full, when it is among those shown."""
        return self.blocks.get(label)


@dataclass(frozen=True)
class BuildJob:
    """What a fresh process needs to build tasks exactly as this one does."""

    task_dirs: list[str]
    custom_tasks: list[str]
    data_dir: str
    root: str
    within: str
    module: str
    lint: bool
    lint_ignore: list[tuple[str, list[str]]]
    sys_path: list[str]
    wanted: list[str] = field(default_factory=list)
    """The names the process builds (a source that indexes lazily indexes only these)."""

    def to_json(self) -> str:
        return json.dumps(self.__dict__)


@dataclass
class FreshBuilds:
    """Fresh-process builds of a run: one child process per (module, seed, attempt), started on
    first use and kept for the module's other tasks, each built when it is asked for; at most
    `MAX_ALIVE` at once.

    An item that asks twice for the same seed gets a second, new process: that is how a build
    is shown to be stable under a fixed seed.
    """

    task_dirs: list[Path]
    custom_tasks: list[Path]
    data_dir: Path
    root: Path
    within: Path
    lint: bool
    lint_ignore: list[tuple[str, list[str]]]
    _children: dict[tuple[str, int, int, bool], _Child] = field(default_factory=dict)
    _asked: dict[tuple[str, str, int, bool], int] = field(default_factory=dict)
    _elsewhere: tempfile.TemporaryDirectory[str] | None = None

    def build(
        self,
        module: Path,
        label: str,
        hash_seed: int,
        docs_shown: int,
        rendering: Rendering,
        older: tuple[int, ...],
        elsewhere: bool = False,
    ) -> FreshBuild:
        """`label` built in a fresh process under `hash_seed` with `rendering` (a new process
        on every call for the same label, rendering and seed); its facts in the `older`
        formats too (format 2's hash every doc once more). With `elsewhere`, the process runs
        as on another machine (`other_machine`)."""
        asked = (label, rendering.key, hash_seed, elsewhere)
        attempt = self._asked.get(asked, 0)
        self._asked[asked] = attempt + 1
        key = (str(module), hash_seed, attempt, elsewhere)
        child = self._children.pop(key, None)
        if child is None:
            job = self._job(module)
            job.wanted.append(_name_of(label))
            machine = self._other_machine() if elsewhere else {}
            child = _Child.start(job, hash_seed, machine)
        self._children[key] = child  # the most recently used last
        while len(self._children) > MAX_ALIVE:
            self._children.pop(next(iter(self._children))).close()
        found = child.ask(
            {
                "label": label,
                "docs_shown": docs_shown,
                "run": _run_json(rendering.run),
                "template": None if rendering.template is None else asdict(rendering.template),
                "older": list(older),
            }
        )
        if "error" in found:
            raise FreshBuildError(
                f"a fresh process (PYTHONHASHSEED={hash_seed}) could not build it: {found['error']}"
            )
        return _from_json(found, docs_shown)

    def _job(self, module: Path) -> BuildJob:
        return BuildJob(
            task_dirs=[str(path) for path in self.task_dirs],
            custom_tasks=[str(path) for path in self.custom_tasks],
            data_dir=str(self.data_dir),
            root=str(self.root),
            within=str(self.within),
            module=str(module),
            lint=self.lint,
            lint_ignore=self.lint_ignore,
            sys_path=[entry for entry in sys.path if isinstance(entry, str)],
        )

    def _other_machine(self) -> dict[str, str]:
        """The environment of another machine (made once per run): its own home and temporary
        folders, with the caches a build needs offline where they are here."""
        if self._elsewhere is None:
            from ..engine.run_folder import run_folder

            self._elsewhere = tempfile.TemporaryDirectory(prefix="elsewhere-", dir=run_folder())
        return other_machine(Path(self._elsewhere.name))

    def close(self) -> None:
        """End every child process (and remove the other machine's folders)."""
        for child in self._children.values():
            child.close()
        self._children.clear()
        if self._elsewhere is not None:
            self._elsewhere.cleanup()
            self._elsewhere = None


def other_machine(folder: Path) -> dict[str, str]:
    """Environment variables under which a process sees another machine's home and temporary
    folders (inside `folder`), while the Hugging Face cache and the user's installed packages
    stay where they are here (a build reads them offline)."""
    import site

    home, temporary = folder / "home", folder / "tmp"
    home.mkdir(exist_ok=True)
    temporary.mkdir(exist_ok=True)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return {
        "HOME": str(home),
        "USERPROFILE": str(home),
        "TMPDIR": str(temporary),
        "TEMP": str(temporary),
        "TMP": str(temporary),
        "HF_HOME": os.environ.get("HF_HOME") or os.path.join(cache, "huggingface"),
        "PYTHONUSERBASE": site.getuserbase(),
    }


@dataclass
class _Child:
    """One fresh interpreter that imported one task module and builds its tasks on request."""

    process: subprocess.Popen[str]
    module: str
    hash_seed: int

    @classmethod
    def start(cls, job: BuildJob, hash_seed: int, machine: dict[str, str]) -> _Child:
        """The process, started with `machine`'s environment over this one's."""
        env = {**os.environ, **machine, "PYTHONHASHSEED": str(hash_seed)}
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "pytest_evaltasks.plugin.builds"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
        except OSError as exc:
            raise FreshBuildError(f"could not start a fresh process: {exc}") from exc
        assert process.stdin is not None
        process.stdin.write(job.to_json() + "\n")
        process.stdin.flush()
        return cls(process, job.module, hash_seed)

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Build one task; its result as the child wrote it."""
        process = self.process
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            line = _read_line(process, TIMEOUT)
        except (OSError, TimeoutError) as exc:
            self.close()
            raise FreshBuildError(
                f"a fresh process building {self.module} did not answer: {exc}"
            ) from exc
        if not line:
            self.close()
            error = (process.stderr.read() if process.stderr else "").strip().split("\n")[-3:]
            raise FreshBuildError(
                f"a fresh process building {self.module} ended (exit {process.returncode}): "
                + " | ".join(error)
            )
        result: dict[str, Any] = json.loads(line)
        return result

    def close(self) -> None:
        """End the process."""
        with contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def _read_line(process: subprocess.Popen[str], timeout: float) -> str:
    """One line of the child's output, waiting at most `timeout` seconds."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            raise TimeoutError(f"no answer within {timeout:.0f} s")
    return process.stdout.readline()


def _name_of(label: str) -> str:
    """The task name an item label names."""
    from ..engine.task_string import parse_label

    return parse_label(split_item_name(label)[0]).name


def _run_json(run: RunSettings) -> dict[str, Any]:
    return {
        "fewshot_as_multiturn": run.fewshot_as_multiturn,
        "system_prompt": run.system_prompt,
        "chat_template": run.chat_template,
        "chat_template_digest": run.chat_template_digest,
        "max_samples": run.max_samples,
        "docs_shown": run.docs_shown,
    }


def _facts_json(facts: SnapshotFacts) -> dict[str, Any]:
    return {
        "format_version": facts.format_version,
        "task": facts.task,
        "settings": facts.settings,
        "hashes": facts.hash_text,
        "inputs": list(facts.inputs),
        "identities": list(facts.identities),
    }


def _facts_from(data: dict[str, Any]) -> SnapshotFacts:
    return SnapshotFacts(
        data["format_version"],
        data["task"],
        data["settings"],
        {},
        data["hashes"],
        tuple(data.get("inputs", ())),
        tuple(data.get("identities", ())),
    )


def reply_of(
    built: BuiltSnapshot, docs_shown: int, lint: list[str], older: list[int]
) -> dict[str, Any]:
    """What a fresh process sends back for one build: its facts, the docs shown in full and
    its lint findings. The file's text is not sent: it is laid out again from the facts and the
    docs shown (`FreshBuild.text`), so a large task's doc hashes cross the pipe once."""
    facts = _facts_json(built.facts)
    formats: dict[str, dict[str, Any]] = {}
    for version in older:
        formats[str(version)] = old = _facts_json(built.facts_in(version))
        if old["hashes"] == facts["hashes"]:  # as they are unless format 2 hashes a doc
            del old["hashes"]  # differently: the receiver takes the current ones
    return {
        "facts": facts,
        "older": formats,
        "size": built.size,
        "partial": built.partial,
        "blocks": built.shown_blocks(docs_shown),
        "lint": lint,
        "upstream": None if built.upstream is None else asdict(built.upstream),
        "reads": list(built.reads),
    }


def _from_json(data: dict[str, Any], docs_shown: int) -> FreshBuild:
    facts = _facts_from(data["facts"])
    return FreshBuild(
        facts=facts,
        older={
            int(version): _facts_from({**data["facts"], **old})
            for version, old in data["older"].items()
        },
        size=data["size"],
        partial=data["partial"],
        docs_shown=docs_shown,
        blocks=data["blocks"],
        lint=data["lint"],
        upstream=None if data["upstream"] is None else Upstream(**data["upstream"]),
        reads=tuple(data["reads"]),
    )


class _ChildBuilder:
    """The child's side: the registry of one module, and its tasks built on request."""

    def __init__(self, job: BuildJob) -> None:
        sys.path[:] = job.sys_path
        from ..engine.registry import Registry

        self.job = job
        self.registry = Registry(
            [Path(path) for path in job.task_dirs],
            [Path(path) for path in job.custom_tasks],
            Path(job.data_dir),
            only=[job.module],
            wanted=job.wanted or None,
            root=Path(job.root),
        )
        self.root = Path(job.root)
        self.within = Path(job.within)

    def build(
        self,
        label: str,
        docs_shown: int,
        run_json: dict[str, Any],
        template: dict[str, Any] | None,
        older: list[int],
    ) -> dict[str, Any]:
        """One task's facts, docs shown and lint findings, or the error that stopped it."""
        from ..engine.task_string import parse_label
        from ..errors import EvalTaskError

        try:
            request = parse_label(split_item_name(label)[0])
            self.registry.ensure([request.name])
            built = build_here(
                self.registry,
                request,
                RunSettings(**run_json),
                None if template is None else _template_of(template),
                self.root,
                self.within,
                current_hash_seed(),
                label,
            )
            lint = (
                lint_of(self.registry, built, request.name, True, self.job.lint_ignore)
                if self.job.lint
                else []
            )
            return reply_of(built, docs_shown, lint, older)
        except (EvalTaskError, KeyError, TypeError, ValueError) as exc:
            return {"error": f"{type(exc).__name__}: {exc}".split("\n")[0]}


def _template_of(data: dict[str, Any]) -> ChatTemplate:
    """A chat template as `asdict` sent it (its files arrive as a list)."""
    from ..engine.chat_template import ChatTemplate

    return ChatTemplate(**{**data, "files": tuple(data.get("files", ()))})


def main() -> None:
    """The fresh process: a job on the first line of stdin, then one request per line, each
    answered by one line of JSON on stdout (anything a task module prints goes to stderr)."""
    from ..engine.inputs import install, set_project

    install()  # observe file opens from the start, as the plugin does
    out = sys.stdout
    sys.stdout = sys.stderr
    job = BuildJob(**json.loads(sys.stdin.readline()))
    set_project(Path(job.within))
    builder = _ChildBuilder(job)
    for line in sys.stdin:
        request = json.loads(line)
        result = builder.build(
            request["label"],
            request["docs_shown"],
            request["run"],
            request["template"],
            request["older"],
        )
        json.dump(result, out)  # written a value at a time: a large task's reply is never
        out.write("\n")  # one string, let alone two (the text and the text with its newline)
        out.flush()


if __name__ == "__main__":
    main()
