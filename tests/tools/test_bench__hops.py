"""bench.durable_peers.hops: reading PostgreSQL's statement log into a decision's timeline."""

from pathlib import Path

import pytest

from bench.durable_peers import hops

LOG = """\
2026-12-06 18:51:50.100 UTC [23609] postgres@s6h_braid LOG:  duration: 0.690 ms  statement: SELECT 1
2026-12-06 18:51:50.101 UTC [23613] postgres@other LOG:  duration: 0.100 ms  statement: SELECT 2
2026-12-06 18:51:50.090 UTC [23600] postgres@s6h_braid LOG:  duration: 0.450 ms  statement: COMMIT
2026-12-06 18:51:50.102 UTC [23609] postgres@s6h_braid LOG:  checkpoint starting: time
2026-12-06 18:51:50.103 UTC [23609] postgres@s6h_braid LOG:  duration: 0.530 ms  execute s: COMMIT
"""


def test_the_databases_statements_are_read_with_their_end_time_pid_and_duration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "postgresql.log"
    log.write_text("earlier line\n" + LOG)
    monkeypatch.setattr(hops, "LOG", log)
    found = hops.statements(len("earlier line\n"), "s6h_braid")
    at = 1796583110.0  # 2026-12-06 18:51:50 UTC
    assert [(round(e - at, 3), pid, ms, what) for e, pid, ms, what in found] == [
        (0.1, 23609, 0.69, "statement: SELECT 1"),
        (0.09, 23600, 0.45, "statement: COMMIT"),
        (0.103, 23609, 0.53, "execute s: COMMIT"),
    ]


def test_a_timeline_keeps_the_decisions_window_in_time_order_named_by_process() -> None:
    rows = [(10.010, 7, 0.5, "statement: COMMIT"), (10.000, 5, 0.2, "statement:  SELECT\n 1"),
            (10.500, 7, 0.1, "statement: late")]  # fmt: skip
    assert hops.timeline(10.0, 10.02, rows, {5: "client"}) == [
        "      0.0 ms    0.20          client  statement: SELECT 1",
        "     10.0 ms    0.50           pid 7  statement: COMMIT",
    ]
