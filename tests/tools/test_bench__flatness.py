"""bench.durable's flatness section: the order of the levels, the picks, the ratio, and
putting one section measured with --only into an earlier report."""

from bench.durable import (
    flat_ratio,
    flatness_goals,
    level_order,
    median_text,
    splice_report,
    spread_picks,
)


def test_the_rounds_go_up_the_levels_then_down_in_turn() -> None:
    assert level_order((100, 1000, 10_000), 3) == [
        (100, 1), (1000, 1), (10_000, 1),
        (10_000, 2), (1000, 2), (100, 2),
        (100, 3), (1000, 3), (10_000, 3),
    ]  # fmt: skip
    assert level_order((100,), 2) == [(100, 1), (100, 2)]
    assert level_order((100, 1000), 0) == []


def test_picks_are_the_middles_of_equal_stretches_and_all_items_when_too_few() -> None:
    assert spread_picks(100, 4) == [12, 37, 62, 87]
    assert spread_picks(10_000, 2) == [2500, 7500]
    assert spread_picks(3, 5) == [0, 1, 2]
    assert len(set(spread_picks(101, 100))) == 100


def passes(low: list[float], high: list[float], back: list[float]) -> list[dict[str, object]]:
    """Three passes of a measurement: 100 and 10,000 in round 1, 100 in round 2."""
    return [
        {"level": 100, "pass": "round 1", "decide_ms": low},
        {"level": 10_000, "pass": "round 1", "decide_ms": high},
        {"level": 100, "pass": "round 2", "decide_ms": back},
    ]


def test_the_ratio_pools_every_round_of_a_level() -> None:
    found = flat_ratio(passes([10.0, 12.0], [11.0, 13.0, 15.0], [14.0, 16.0]), "decide_ms")
    assert found == (100, 13.0, 10_000, 13.0)


def test_a_goal_line_says_met_at_1_1x_and_missed_above() -> None:
    part = {"passes": [{**p, "inbox_ms": [20.0, 23.0]} for p in
                       passes([10.0], [11.0], [10.0])]}  # fmt: skip
    part["passes"][1]["inbox_ms"] = [24.0, 25.0]
    decision, inbox = flatness_goals(part)
    assert decision == (
        "- **MET** — flat across open requests, one decision (API + step): median 11.0 ms "
        "at 10,000 open vs 10.0 ms at 100 (1.10x; goal ≤ 1.1x)."
    )
    assert inbox == (
        "- **MISSED** — flat across open requests, the inbox list's first page: median 24.5 ms "
        "at 10,000 open vs 21.5 ms at 100 (1.14x; goal ≤ 1.1x)."
    )


def test_a_median_is_shown_with_its_interval_and_n_and_alone_without_one() -> None:
    assert median_text([5.0, 5.0, 5.0]) == "5.0 ms [5.0-5.0] (n=3)"
    assert median_text([7.25]) == "7.2 ms (n=1)"


EARLIER = """# Report

Run at 10:00.

## Goals

- **MET** — chain: 1.0x.
- **MISSED** — flat across open requests, one decision: 2.00x.
- **MET** — braid write_rows, 1 row/tx: fine.

## Decisions

old decisions

## Workers

old workers

## Fork

old fork
"""
FRESH = """# Report

Run at 11:00.

## Goals

- **MET** — chain: 9.9x.
- **MET** — flat across open requests, one decision: 1.01x.
- **MET** — flat across open requests, the inbox: 1.02x.

## Decisions

Not measured.

## Workers

Not measured.

## Flat

new flat

## Fork

Not measured.
"""


def test_a_spliced_section_goes_after_its_predecessor_and_only_its_goal_lines_change() -> None:
    spliced = splice_report(EARLIER, FRESH, ["Flat"], ["flat across open requests"])
    assert spliced == EARLIER.replace(
        "- **MISSED** — flat across open requests, one decision: 2.00x.\n",
        "- **MET** — flat across open requests, one decision: 1.01x.\n"
        "- **MET** — flat across open requests, the inbox: 1.02x.\n",
    ).replace("old workers\n\n", "old workers\n\n## Flat\n\nnew flat\n\n")


def test_a_section_spliced_again_replaces_the_first_splice() -> None:
    once = splice_report(EARLIER, FRESH, ["Flat"], ["flat across open requests"])
    again = splice_report(once, FRESH.replace("new flat", "newer flat"), ["Flat"],
                          ["flat across open requests"])  # fmt: skip
    assert again == once.replace("new flat", "newer flat")


def test_goal_lines_of_a_section_the_earlier_report_lacked_follow_its_last_goal() -> None:
    earlier = EARLIER.replace(
        "- **MISSED** — flat across open requests, one decision: 2.00x.\n", ""
    )
    spliced = splice_report(earlier, FRESH, ["Flat"], ["flat across open requests"])
    goals = spliced.split("## Goals\n\n")[1].split("\n\n")[0].splitlines()
    assert goals == [
        "- **MET** — chain: 1.0x.",
        "- **MET** — braid write_rows, 1 row/tx: fine.",
        "- **MET** — flat across open requests, one decision: 1.01x.",
        "- **MET** — flat across open requests, the inbox: 1.02x.",
    ]


def test_only_sections_of_their_own_are_spliced_into_the_earlier_report() -> None:
    import datetime as dt

    from bench.durable import METHODS, QUICK, Results, report_text

    results = Results(QUICK, "db", dt.datetime(2026, 12, 6, 15, 0, tzinfo=dt.UTC))
    results.errors["flatness"] = "BenchError: nothing measured"
    fresh = report_text(results, {"flatness"}, None)
    earlier = "# Durable Braid: measured\n\n## Goals\n\n- **MET** — chain.\n\n## Kept\n\nold\n"
    assert report_text(results, {"fork", "peer"}, earlier) == fresh
    assert report_text(results, {"flatness"}, earlier) == earlier.replace(
        "## Kept",
        "## Approvals flat across open requests\n\nFailed: BenchError: nothing measured\n\n"
        f"{METHODS['flatness'][1]}\n\n## Kept",
    )
