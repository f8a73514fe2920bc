"""The table of what the port checks found, made from their records (`docs/ports.md`).

    python -m pytest_evaltasks.plugin.ports_table tasks/__snapshots__/ports

prints one Markdown row per port and kind of difference: the benchmark, the two sides, the kind,
how many docs it affects and one example, each read from a record a port item wrote (and that CI
checks: `pytest --evaltasks ports` in each harness's environment). `--check FILE` exits 1 when
FILE's table is not the one the records give.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from ..snapshot.port_record import IDENTICAL, sections

BEGIN = "<!-- ports table: begin -->"
END = "<!-- ports table: end -->"
HEADER = [
    "| benchmark | a | b | difference | docs | example |",
    "|---|---|---|---|---|---|",
]


def table(folder: Path) -> str:
    """The Markdown table of every record in `folder`, by name."""
    rows = list(HEADER)
    for path in sorted(folder.glob("*.txt")):
        parts = sections(path.read_text(encoding="utf-8"))
        port = dict(line.partition(": ")[::2] for line in parts.get("port", []))
        benchmark = port.get("name", path.stem).partition(".")[0]
        aligned = port.get("docs", "").rpartition("aligned ")[2] or "?"
        a, b = _cell(port.get("a", "")), _cell(port.get("b", ""))
        lines = parts.get("differences", [])
        if lines == [IDENTICAL]:
            rows.append(f"| {benchmark} | {a} | {b} | none | {aligned} of {aligned} | |")
            continue
        for head, example in zip(lines[::2], lines[1::2], strict=False):
            kind, _, rest = head.partition(": ")
            count = rest.partition(" doc")[0]
            shown = example.strip().removeprefix("e.g. ")
            rows.append(
                f"| {benchmark} | {a} | {b} | {kind} | {count} of {aligned} | {_cell(shown)} |"
            )
    return "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    """Text in a table cell: code, its pipes and backticks kept from breaking the table."""
    if not text:
        return ""
    return (
        "<code>"
        + text.replace("&", "&amp;").replace("<", "&lt;").replace("|", "&#124;")
        + "</code>"
    )


def embedded(document: str) -> str | None:
    """The table between the markers of a document; None when it has none."""
    start, end = document.find(BEGIN), document.find(END)
    if start == -1 or end == -1:
        return None
    return document[start + len(BEGIN) : end].strip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    made = table(Path(args[0]))
    if len(args) == 3 and args[1] == "--check":
        found = embedded(Path(args[2]).read_text(encoding="utf-8"))
        if found != made:
            print(
                f"{args[2]}: its ports table is not the records' (regenerate it)", file=sys.stderr
            )
            return 1
        return 0
    sys.stdout.write(made)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
