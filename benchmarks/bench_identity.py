"""What digesting the project's own code by its source costs, against format 3's bytecode.

A metric object holding FUNCTIONS functions of a project module (each with a comprehension,
an f-string and a lambda) is identified once in a fresh process, the cold case every run
meets: the source digest reads and parses the module, the bytecode digest does not. Prints
the median of RUNS fresh processes for each, and their ratio.

    python benchmarks/bench_identity.py [--functions 200] [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

FUNCTION = '''
def score_{n}(pred, gold, *, weight={n}):
    """Function {n}."""
    words = [word.lower() for word in pred.split() if word]
    label = f"{{gold!r}} {{weight}}"
    return sum(len(w) for w in words) + len(label) + (lambda x: x + {n})(weight)
'''

WORKER = """
import json, sys, time
from pathlib import Path
project, legacy = Path(sys.argv[1]), sys.argv[2] == "bytecode"
sys.path.insert(0, str(project))
import own_metrics
from pytest_evaltasks.snapshot import identity
start = time.perf_counter()
if legacy:
    with identity.format_3_identities():
        identity.identity_digest(own_metrics.METRIC, project)
else:
    identity.identity_digest(own_metrics.METRIC, project)
print(json.dumps(time.perf_counter() - start))
"""


def write_project(folder: Path, functions: int) -> None:
    body = "".join(textwrap.dedent(FUNCTION).format(n=n) for n in range(functions))
    names = ", ".join(f"score_{n}" for n in range(functions))
    (folder / "own_metrics.py").write_text(body + f"\nMETRIC = [{names}]\n", encoding="utf-8")


def timed(project: Path, kind: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(project), kind],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(done.stdout))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--functions", type=int, default=200)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        write_project(project, args.functions)
        timed(project, "source")  # bytecode caches written, as a second run finds them
        pairs = [(timed(project, "source"), timed(project, "bytecode")) for _ in range(args.runs)]
    source = statistics.median(s for s, _ in pairs)
    bytecode = statistics.median(b for _, b in pairs)
    ratio = statistics.median(s / b for s, b in pairs)
    print(f"{args.functions} own functions identified once, cold, median of {args.runs} runs")
    print(f"source digest:   {source * 1000:7.2f} ms ({source / args.functions * 1e6:.0f} us each)")
    print(f"bytecode digest: {bytecode * 1000:7.2f} ms")
    print(f"ratio (paired):  {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
