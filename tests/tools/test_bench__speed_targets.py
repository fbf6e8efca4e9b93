"""`make bench`'s speed targets: a ratio is judged over its interval, not its median alone."""

from bench.report import Outcome, Results, speed_target
from bench.shapes import Shape


def results(braid: tuple[float, ...], peer: tuple[float, ...]) -> Results:
    """Return a foreach of 1,000 nodes measured in rounds with these medians (seconds)."""
    return Results(
        labels={"braid": "Braid task", "langgraph": "LangGraph"},
        outcomes=[
            Outcome("braid", Shape.FOREACH, 1_000, runs=braid, work=1_000, round_medians=braid),
            Outcome("langgraph", Shape.FOREACH, 1_000, runs=peer, work=1_000,
                    round_medians=peer),
        ],
    )  # fmt: skip


def test_a_ratio_at_the_target_with_rounds_on_both_sides_is_not_shown() -> None:
    # Median 5.0x; the rounds read from 4x to 6x: a tie with the target.
    line = speed_target(results((0.01, 0.01, 0.01), (0.04, 0.05, 0.06)), Shape.FOREACH, 1_000)
    assert line == (
        "- **NOT SHOWN** — foreach, N = 1,000: Braid task 10.0 µs/node, LangGraph 50.0 µs/node: "
        "5.0x [4.0 to 6.0] (target ≥ 5x)"
    )


def test_a_ratio_clear_of_the_target_is_met_and_one_below_it_missed() -> None:
    clear = speed_target(results((0.01, 0.01, 0.01), (0.07, 0.08, 0.09)), Shape.FOREACH, 1_000)
    assert clear.startswith("- **MET** — foreach, N = 1,000:")
    assert clear.endswith(": 8.0x [7.0 to 9.0] (target ≥ 5x)")
    below = speed_target(results((0.01, 0.01, 0.01), (0.03, 0.04, 0.09)), Shape.FOREACH, 1_000)
    assert below.startswith("- **MISSED** — foreach")


def test_one_round_is_judged_by_its_median() -> None:
    line = speed_target(results((0.01,), (0.05,)), Shape.FOREACH, 1_000)
    assert line.startswith("- **MET** — foreach") and line.endswith(": 5.0x (target ≥ 5x)")
