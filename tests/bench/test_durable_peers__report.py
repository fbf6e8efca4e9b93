"""bench/PEERS.md's arithmetic: rounds, p99, the best peer over idioms, MET and MISSED."""

import datetime as dt
import json
import os
import time
from pathlib import Path

from bench.durable_peers import run
from bench.durable_peers.report import (
    Cell,
    faster_target,
    kill_summary,
    latency_target,
    read_cells,
    throughput_target,
    whole_rounds,
)
from bench.measure import ratio_interval


def line(subject: str, workload: str, rnd: int, values: list[float], **extra: object) -> str:
    """Return one driver line as bench.durable_peers.common.Recorder writes it."""
    row = {"subject": subject, "workload": workload, "round": rnd, "values": values,
           "unit": "s", "latencies": [], "start_phase_s": None, "load1": 1.0,
           "peak_rss_kb": 1024, "variant": ""}  # fmt: skip
    return json.dumps(row | extra)


def test_the_median_is_of_the_rounds_medians_and_round_zero_is_left_out() -> None:
    lines = [line("braid", "W4", 0, [9.0]), line("braid", "W4", 1, [0.01, 0.03, 0.02]),
             line("braid", "W4", 2, [0.05, 0.04, 0.06])]  # fmt: skip
    cell = read_cells(lines)[("braid", "W4")]
    assert cell.round_medians == [0.02, 0.05]
    assert cell.median == 0.035
    assert sorted(cell.values) == [0.01, 0.02, 0.03, 0.04, 0.05, 0.06]


def test_a_run_stopped_mid_round_reports_its_whole_rounds_only() -> None:
    meta = [{"round": r, "subject": s} for r, s in
            [(1, "braid"), (1, "dbos"), (2, "dbos"), (2, "braid"), (3, "braid")]]  # fmt: skip
    assert whole_rounds(meta, ("braid", "dbos")) == 2
    lines = [line("braid", "W1", 2, [0.2]), line("braid", "W1", 3, [0.9])]
    assert read_cells(lines, 2)[("braid", "W1")].values == [0.2]


def test_p99_is_the_nearest_rank_and_w3_takes_it_from_the_per_run_latencies() -> None:
    assert Cell(rounds={1: [float(i) for i in range(1, 201)]}).p99() == 198.0
    throughput = Cell(rounds={1: [40.0]}, latencies=[float(i) for i in range(1, 101)])
    assert throughput.p99() == 99.0


def cells(**medians: float) -> dict[tuple[str, str], Cell]:
    """Return one-round cells from 'subject__workload' names."""
    found = {}
    for name, value in medians.items():
        subject, workload = name.split("__")
        found[(subject, workload)] = Cell(rounds={1: [value]})
    return found


def test_the_chain_target_is_against_the_best_idiom_of_the_self_recovering_peers() -> None:
    found = cells(braid__W1=0.25, dbos__W1=0.7, temporal__W1=5.0, temporal__W1alt=0.26,
                  langgraph__W1=0.2)  # fmt: skip
    assert faster_target(found, "W1") == [
        "- **MISSED** — W1: Braid 0.25 s, best self-recovering peer temporal (W1, other idiom) "
        "0.26 s: 1.04x ahead (target ≥ 3x)",
        "- **MISSED** — W1: Braid 0.25 s against LangGraph + PostgresSaver 0.2 s: 0.80x "
        "(target: ahead)",
    ]
    found[("braid", "W1")] = Cell(rounds={1: [0.05]})
    assert [text.split(" — ")[0] for text in faster_target(found, "W1")] == [
        "- **MET**", "- **MET**"
    ]  # fmt: skip


def test_the_throughput_targets_take_the_highest_peer_and_half_the_celery_floor() -> None:
    found = cells(braid__W3=90.0, dbos__W3=40.0, temporal__W3=9.6, langgraph__W3=127.0,
                  celery__W3=169.0)  # fmt: skip
    assert throughput_target(found) == [
        "- **MET** — W3: Braid 90.0 runs/s, best self-recovering peer dbos 40.0 runs/s: 2.25x "
        "(target ≥ 2x)",
        "- **MISSED** — W3: Braid 90.0 runs/s against LangGraph + PostgresSaver 127.0 runs/s: "
        "0.71x (target: ahead)",
        "- **MET** — W3: Braid 90.0 runs/s against raw Celery with Braid's settings 169.0 "
        "runs/s: 0.53 of it (target ≥ 0.5)",
    ]


def test_the_decision_targets_read_the_median_and_the_p99_in_milliseconds() -> None:
    found = cells(dbos__W4=0.0274, temporal__W4=0.0507)
    found[("braid", "W4")] = Cell(rounds={1: [0.010, 0.012, 0.120]})
    assert latency_target(found) == [
        "- **MET** — W4: Braid 12.0 ms (through the API), best self-recovering peer dbos "
        "27.4 ms: 0.44x (target ≤ 0.5)",
        "- **MISSED** — W4: Braid's p99 120.0 ms over 3 decisions (target < 100 ms)",
    ]


def rounds(*medians: float) -> Cell:
    """Return a cell of one value a round."""
    return Cell(rounds={i: [m] for i, m in enumerate(medians, start=1)})


def test_a_lead_inside_the_spread_of_the_rounds_is_not_shown_not_met() -> None:
    # The fourteenth session's W1: Braid's median lower, the two subjects' rounds overlapping.
    found = {("braid", "W1"): rounds(0.171, 0.178, 0.273, 0.175, 0.19),
             ("langgraph", "W1"): rounds(0.153, 0.185, 0.197, 0.19, 0.16),
             ("temporal", "W1alt"): rounds(0.9, 0.95, 1.0, 0.92, 0.97)}  # fmt: skip
    chain = faster_target(found, "W1")
    assert chain[0].startswith("- **MET** — W1: Braid 0.178 s, best self-recovering peer "
                               "temporal (W1, other idiom) 0.95 s: 5.34x [")  # fmt: skip
    assert chain[1].startswith("- **NOT SHOWN** — W1: Braid 0.178 s against LangGraph + "
                               "PostgresSaver 0.185 s: 1.04x [")  # fmt: skip
    low, high = (float(x) for x in chain[1].split("[")[1].split("]")[0].split(" to "))
    assert low < 1 < high
    # Rounds apart: the same medians' lead is shown.
    found[("langgraph", "W1")] = rounds(0.3, 0.31, 0.32, 0.33, 0.34)
    apart = faster_target(found, "W1")[1]
    assert apart.startswith("- **MET** — W1: Braid 0.178 s against LangGraph + PostgresSaver "
                            "0.32 s: 1.80x [")  # fmt: skip


def test_a_ratio_interval_resamples_both_sides() -> None:
    assert ratio_interval([2.0, 2.0], [1.0, 1.0]) == (2.0, 2.0)
    assert ratio_interval([2.0], [1.0, 1.0]) is None
    low, high = ratio_interval([1.0, 2.0, 3.0], [1.0, 1.0, 1.0]) or (0, 0)
    assert (low, high) == (1.0, 3.0)


def test_a_missing_subject_is_a_miss_not_a_pass() -> None:
    assert latency_target(cells(braid__W4=0.01)) == [
        "- **MISSED** — W4: not every subject was measured"
    ]


def test_the_kill_summary_says_what_was_measured() -> None:
    rows = [
        {"subject": "dbos", "case": "none", "completed": True, "seconds": 2.3},
        {"subject": "dbos", "case": "worker", "completed": False, "seconds": None,
         "waited_s": 10.0, "completed_after_restart": True, "seconds_from_restart": 2.0},
        {"subject": "langgraph", "case": "process", "completed": False, "seconds": None,
         "waited_s": 0.0, "completed_after_restart": True, "seconds_from_restart": 4.6,
         "nodes_run_on_resume": 15},
        {"subject": "braid", "case": "worker", "completed": True, "seconds": 11.7},
    ]  # fmt: skip
    assert kill_summary(rows, "dbos") == (
        "a whole worker killed: not completed by itself within 10 s; completed 2.0 s after "
        "a restart"
    )
    assert kill_summary(rows, "langgraph") == (
        "the running process killed: nothing runs it again by itself; completed 4.6 s after a "
        "restart (invoked again: 15 nodes ran again or anew)"
    )
    assert kill_summary(rows, "braid") == "a whole worker killed: completed by itself in 11.7 s"
    assert kill_summary(rows, "temporal") == "not measured in this run"


def test_a_report_rendered_later_names_the_code_and_the_time_that_were_measured(
    tmp_path: Path,
) -> None:
    """`--render` after the tree moved on keeps the provenance taken when measuring began."""
    measured = ["## Provenance", "", "| what | value |", "|---|---|", "| commit | 1234abcd |", ""]
    began = time.time() - 3600  # measured an hour ago, rendered now
    info = {"mode": "quick", "planned_rounds": 1, "started": began, "facts": [["cores", "2"]],
            "servers": [], "provenance": measured}  # fmt: skip
    (tmp_path / "info.json").write_text(json.dumps(info))
    meta = {"subject": "braid", "round": 1, "load1_before": 0.5, "load1_after": 0.9,
            "seconds": 16.0, "rc": 0, "others": []}  # as run.py writes it  # fmt: skip
    (tmp_path / "meta.jsonl").write_text(json.dumps(meta) + "\n")
    (tmp_path / "rows.jsonl").write_text(line("braid", "W1", 1, [0.2]) + "\n")
    for name in ("rows.jsonl", "meta.jsonl"):  # the measuring ended 50 minutes ago
        os.utime(tmp_path / name, (began + 600, began + 600))
    out = tmp_path / "PEERS.md"
    assert run.main(["--render", str(tmp_path), "--subjects", "braid", "--out", str(out)]) == 0
    text = out.read_text()
    assert "| commit | 1234abcd |" in text
    assert text.count("## Provenance") == 1
    start, end = (dt.datetime.fromtimestamp(t, dt.UTC) for t in (began, began + 600))
    assert f"on {start:%Y-%m-%d %H:%M}-{end:%H:%M} UTC (this page rendered again at " in text
