"""Timing whole processes, for the benchmarks: wall time and peak memory, A/B interleaved.

Each timed run is a fresh child process. Wall time is measured around it; CPU time (user +
system) and peak memory (max RSS) are the child's own, from `wait4` (CPU time counts the
process and the children it waited for, e.g. xdist's workers). On a machine shared with other
work, CPU time is the steadier measure of a command's own cost; wall time is what `-n` buys.
Two commands are timed in turn, A B A B ..., and compared by the
median of their pair-by-pair ratios, which holds when the machine's speed drifts (shared
machines drift a lot: identical runs vary by 2x here).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Run:
    """One finished child process."""

    wall: float
    peak_mb: float
    code: int
    cpu: float = 0.0
    """User + system seconds of the process and the children it waited for."""


def timed_run(command: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    """Run `command` once; its output is discarded. Bytecode caching is left on."""
    environment = dict(os.environ if env is None else env)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    process = subprocess.Popen(
        list(command), cwd=cwd, env=environment, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    before = os.times()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    after = os.times()
    # wait4's usage is the child's own; its reaped children (xdist workers) are added from
    # this process's children totals, which grow by exactly those of the child's own tree.
    children = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    cpu = max(usage.ru_utime + usage.ru_stime, children)
    return Run(wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), cpu)


@dataclass(frozen=True)
class Pair:
    """A and B timed in turn."""

    a: list[Run]
    b: list[Run]

    @property
    def ratio(self) -> float:
        """The median of the run-by-run wall-time ratios A/B."""
        return statistics.median(x.wall / y.wall for x, y in zip(self.a, self.b, strict=True))

    @property
    def cpu_ratio(self) -> float:
        """The median of the run-by-run CPU-time ratios A/B: steadier than wall time when other
        work shares the machine (a waiting process accrues wall time, not CPU time)."""
        return statistics.median(x.cpu / y.cpu for x, y in zip(self.a, self.b, strict=True))

    def line(self, label_a: str, label_b: str) -> str:
        """One printable summary."""
        return (
            f"{label_a}: median {median(self.a):.3f} s (min {min(r.wall for r in self.a):.3f}), "
            f"peak {max(r.peak_mb for r in self.a):.0f} MB | {label_b}: median "
            f"{median(self.b):.3f} s, peak {max(r.peak_mb for r in self.b):.0f} MB | "
            f"ratio A/B {self.ratio:.2f}x wall, {self.cpu_ratio:.2f}x cpu"
        )


def interleaved(a: Sequence[str], b: Sequence[str], cwd: Path, runs: int, warmup: int = 1) -> Pair:
    """Time `a` and `b` in turn, `runs` pairs after `warmup` untimed pairs."""
    for _ in range(warmup):
        timed_run(a, cwd)
        timed_run(b, cwd)
    first: list[Run] = []
    second: list[Run] = []
    for _ in range(runs):
        first.append(timed_run(a, cwd))
        second.append(timed_run(b, cwd))
    failed = [run.code for run in first + second if run.code not in (0, 1)]
    if failed:
        raise SystemExit(f"a timed command failed (exit codes {failed}): {a} / {b}")
    return Pair(first, second)


def median(runs: Sequence[Run]) -> float:
    """The median wall time."""
    return statistics.median(run.wall for run in runs)
