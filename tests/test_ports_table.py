"""docs/ports.md's table is the bundled port records' (`plugin/ports_table`), and every declared
port has a record: the published figures are the ones CI checks."""

from __future__ import annotations

from pathlib import Path

from pytest_evaltasks.engine.ports import read_ports
from pytest_evaltasks.plugin.ports_table import embedded, main, table

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "tasks" / "__snapshots__" / "ports"


def test_the_published_table_is_the_records_table() -> None:
    document = (ROOT / "docs" / "ports.md").read_text(encoding="utf-8")
    assert embedded(document) == table(RECORDS)
    assert main([str(RECORDS), "--check", str(ROOT / "docs" / "ports.md")]) == 0


def test_every_declared_port_has_a_record_and_every_record_a_port() -> None:
    declared = {port.name for port in read_ports(ROOT / "tasks")}
    recorded = {path.stem for path in RECORDS.glob("*.txt")}
    assert declared == recorded
    assert {name.partition(".")[0] for name in declared} >= {
        "mmlu", "arc_easy", "arc_challenge", "hellaswag", "gsm8k", "winogrande", "boolq",
        "truthfulqa_mc",
    }  # fmt: skip


def test_a_row_per_kind_with_its_count_and_example(tmp_path: Path) -> None:
    (tmp_path / "x.a-b.txt").write_text(
        "# pytest-evaltasks port, format 1\n# comment\n\n[port]\nname: x.a-b\na: t|0\n"
        "b: u|0 (lm_eval:tasks)\naligned: by split and row index\ndocs: a 4, b 4, aligned 4\n\n"
        "[sides]\na: -\nb: -\n\n[differences]\n"
        "target form: 2 docs (test/0, test/1; #abc)\n  e.g. test/0: a ' A'; b 'A|B'\n",
        encoding="utf-8",
    )
    (tmp_path / "y.a-b.txt").write_text(
        "# pytest-evaltasks port, format 1\n# c\n\n[port]\nname: y.a-b\na: t|0\nb: v|0\n"
        "aligned: by split and row index\ndocs: a 3, b 3, aligned 3\n\n[sides]\n\n"
        "[differences]\nnone: both sides render the same\n",
        encoding="utf-8",
    )
    rows = table(tmp_path).splitlines()[2:]
    assert rows == [
        "| x | <code>t&#124;0</code> | <code>u&#124;0 (lm_eval:tasks)</code> | target form | "
        "2 of 4 | <code>test/0: a ' A'; b 'A&#124;B'</code> |",
        "| y | <code>t&#124;0</code> | <code>v&#124;0</code> | none | 3 of 3 | |",
    ]
    document = tmp_path / "doc.md"
    document.write_text("<!-- ports table: begin -->\nold\n<!-- ports table: end -->\n")
    assert main([str(tmp_path), "--check", str(document)]) == 1
