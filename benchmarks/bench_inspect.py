"""How much of inspect_evals registers and builds offline, and what indexing it costs.

Every task inspect_evals' registry names is registered from `_registry.py` without importing
anything. Each is then built once with an empty data root and no network, and sorted by what
stopped it:

- `built`: it needs no rows (its samples are written in its code), and two builds record the
  same first SAMPLES samples;
- `rows`: it reads its rows through `datasets` (`hf_dataset`, `load_dataset`), or files by URL
  (`csv_dataset`/`json_dataset` on a URL, inspect_evals' cached loaders, Inspect's checksummed
  `download()`), or a Hub repository's files (`hf_hub_download`, `snapshot_download`); the
  error names the data-root folder or file they go in, so it builds offline once they are
  there (`--evaltasks-save-data` puts them there where the network is reachable);
- `other`: it fetches files another way (a git clone, its own HTTP client), needs a package
  inspect_evals does not install, fails while it is built, or records different samples on
  each build; the first line of each kind of error is printed.

Needs the inspect extra (`pip install -e ".[inspect]"`). Retries' waits are skipped (no
`time.sleep`), and each build is given TIMEOUT seconds.

    HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 python benchmarks/bench_inspect.py [--timeout 60]
"""

from __future__ import annotations

import argparse
import collections
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


class _TimedOut(BaseException):
    """A build over its time (not an `Exception`, which a task's own handler could swallow)."""


SAMPLES = 20
"""Samples rendered by each of a task's two builds (an agent loop renders slowly)."""


def _alarm(signum: int, frame: Any) -> None:
    raise _TimedOut


def classify(error: BaseException | None) -> tuple[str, str]:
    """`built`, `rows` or `other`, with the error's first line."""
    from pytest_evaltasks.errors import DatasetError

    if error is None:
        return "built", ""
    text = f"{type(error).__name__}: {error}".split("\n")[0]
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, DatasetError) and "no local copy of " in str(cause):
            return "rows", text
        cause = cause.__cause__ or cause.__context__
    return "other", text


WHY = (
    (("two builds record",), "records different samples on each build"),
    (("ModuleNotFoundError", "ImportError", "PrerequisiteError", "is not installed",
      "optional dependency", "install the optional"),
     "needs a package inspect_evals does not install"),
    (("docker", "CalledProcessError", "git clone", "sandbox"),
     "starts docker or git as it is built, or needs a sandbox"),
    (("No model specified", "get_model", "model environment"), "asks for a model as it is built"),
    (("must be called inside", "checkpointer", "ProcessLookupError"),
     "a solver needs Inspect's sample context before it sends anything"),
    (("is not set",), "needs a setting"),
    (("LocalEntryNotFoundError", "snapshot folder", "hf_hub_download"),
     "downloads Hub files another way"),
    (("https://", "http://", "ConnectError", "ConnectionError", "github.com", "RetryError",
      "Failed to download"),
     "fetches files by URL with its own HTTP client"),
)  # fmt: skip
"""What a task that fails offline does, by the words of its error."""


def why(text: str) -> str:
    """The kind of reason an error's first line gives (else the line itself)."""
    for words, reason in WHY:
        if any(word in text for word in words):
            return reason
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timeout", type=int, default=60)
    parser.add_argument("--names", action="store_true", help="name each task not built")
    args = parser.parse_args()
    from pytest_evaltasks.sources.inspect.adapter import build, installed_package, installed_tasks

    started = time.perf_counter()
    package = installed_package()
    if package is None:
        print("inspect_evals is not installed: pip install -e '.[inspect]'", file=sys.stderr)
        return 1
    refs = installed_tasks(package)
    indexed = time.perf_counter() - started
    print(f"registered: {len(refs)} tasks from inspect_evals' registry in {indexed * 1000:.1f} ms")

    time.sleep = lambda seconds: None  # retries (backoff) wait minutes between attempts
    signal.signal(signal.SIGALRM, _alarm)
    kinds: dict[str, list[str]] = collections.defaultdict(list)
    reasons: collections.Counter[str] = collections.Counter()
    empty = Path(tempfile.mkdtemp(prefix="empty-data-root-"))
    for ref in refs:
        error: BaseException | None = None
        signal.alarm(args.timeout)
        try:
            if (
                build(ref, None, {}, empty, SAMPLES).samples
                != build(ref, None, {}, empty, SAMPLES).samples
            ):
                error = AssertionError("two builds record different samples")
        except _TimedOut as exc:
            error = exc
        except BaseException as exc:  # a task's own failure, whatever it is
            error = exc
        finally:
            signal.alarm(0)
        kind, text = classify(error)
        kinds[kind].append(ref.name)
        if args.names and kind != "built":
            print(f"{kind:>6}  {ref.name}: {text[:200]}")
        if kind == "other":
            reasons["timed out" if isinstance(error, _TimedOut) else why(text)[:160]] += 1
    total = len(refs)
    for kind in ("built", "rows", "other"):
        share = len(kinds[kind]) / total if total else 0.0
        print(f"{kind:>6}: {len(kinds[kind]):4d} of {total} ({share:.0%})")
    print(f"offline once rows are in the data root: {len(kinds['built']) + len(kinds['rows'])}"
          f" of {total} ({(len(kinds['built']) + len(kinds['rows'])) / total:.0%})")  # fmt: skip
    print("other, by what stopped it:")
    for text, count in reasons.most_common(25):
        print(f"  {count:3d}  {text}")
    print(f"whole measurement: {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
