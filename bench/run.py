"""Run Braid and its peers on the same shapes, print the ratios, and write the report.

Usage: python -m bench.run [--quick] [--out bench/RESULTS.md] [--shapes chain,fork]
       [--subjects braid,langgraph] [--sizes 10,100,1000] [--budget 60] [--rounds 3]

Subjects are interleaved round by round: each round measures every (shape, subject) once,
each in a fresh process, the subjects' order turning by one place per round, so every
subject gets the same passes at every N and a slow spell of the machine lands on all alike.
"""

from __future__ import annotations

import argparse
import json
import selectors
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.measure import format_seconds
from bench.report import ROOT, Outcome, Results, RunInfo, machine_facts, render
from bench.series import SUBJECTS
from bench.shapes import NESTED_ITEMS, Shape

FULL_SIZES = (10, 100, 1_000, 10_000)
QUICK_SIZES = (10, 100, 1_000)
FULL_ROUNDS = 3
QUICK_ROUNDS = 2
SLACK_S = 30.0  # building a flow (validation, compilation) is untimed but takes a while


@dataclass(frozen=True, slots=True)
class Plan:
    """What one benchmark run measures, and how long each measurement may take."""

    shapes: tuple[Shape, ...]
    subjects: tuple[str, ...]
    sizes: tuple[int, ...]
    budget_s: float  # per measurement: warm-up plus the timed runs
    target_s: float  # short runs repeat until about this much time is measured
    rounds: int  # every (shape, subject) is measured once per round


def parse_plan(argv: list[str]) -> tuple[Plan, Path | None, str]:
    """Return the plan, the report path and the mode name from the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 1,000, smaller budgets")
    parser.add_argument("--out", type=Path, help="write the markdown report here")
    parser.add_argument("--shapes", default=",".join(s.value for s in Shape))
    parser.add_argument("--subjects", default=",".join(SUBJECTS))
    parser.add_argument("--sizes", help="comma-separated N (default: 10..10,000; quick: ..1,000)")
    parser.add_argument("--budget", type=float, help="seconds per measurement (120; quick: 10)")
    parser.add_argument("--rounds", type=int, help=f"rounds ({FULL_ROUNDS}; quick: {QUICK_ROUNDS})")
    args = parser.parse_args(argv)
    default_sizes = QUICK_SIZES if args.quick else FULL_SIZES
    sizes = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else default_sizes
    plan = Plan(
        shapes=tuple(Shape(s) for s in args.shapes.split(",")),
        subjects=tuple(key for key in args.subjects.split(",") if key in SUBJECTS),
        sizes=sizes,
        budget_s=args.budget or (10.0 if args.quick else 120.0),
        target_s=0.3 if args.quick else 1.0,
        rounds=args.rounds or (QUICK_ROUNDS if args.quick else FULL_ROUNDS),
    )
    return plan, args.out, "bench-quick" if args.quick else "bench"


def shape_sizes(plan: Plan, shape: Shape) -> tuple[int, ...]:
    """Return the sizes of a shape: the foreach x fork has one size, 100 items."""
    return (NESTED_ITEMS,) if shape is Shape.FOREACH_FORK else plan.sizes


def read_line(process: subprocess.Popen[str], timeout_s: float) -> dict[str, Any] | None:
    """Return the child's next JSON line, or None at its end or when the time is up."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout_s):
            return None
    line = process.stdout.readline()
    return json.loads(line) if line else None


def outcome_of(key: str, shape: Shape, record: dict[str, Any]) -> Outcome:
    """Return the outcome of one result line."""
    note = record.get("skipped") or record.get("error")
    return Outcome(
        subject=key,
        shape=shape,
        n=record["n"],
        runs=tuple(record.get("runs", ())),
        work=record.get("work", 0),
        note=note,
        warm_up=record.get("warm_up"),
        remark=record.get("remark"),
        peak_rss_kb=record.get("peak_rss_kb"),
    )


def run_series(key: str, shape: Shape, sizes: tuple[int, ...], plan: Plan) -> list[Outcome]:
    """Measure one subject on one shape in a child process; kill it when it overruns."""
    argv = [sys.executable, "-m", "bench.series", key, shape.value]
    argv += [",".join(map(str, sizes)), str(plan.budget_s), str(plan.target_s)]
    process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    outcomes: list[Outcome] = []
    pending = list(sizes)
    try:
        while pending:
            record = read_line(process, plan.budget_s + SLACK_S)
            if record is None:
                break
            if record["event"] == "result":
                outcomes.append(outcome_of(key, shape, record))
                pending.remove(record["n"])
                progress(outcomes[-1])
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    killed = f"skipped: over budget (no result within {plan.budget_s + SLACK_S:.0f} s)"
    return outcomes + [Outcome(key, shape, n, note=killed) for n in pending]


def run_round(plan: Plan, index: int) -> list[Outcome]:
    """Measure every (shape, subject) once; round `index` starts at the index-th subject."""
    turn = index % len(plan.subjects) if plan.subjects else 0
    order = plan.subjects[turn:] + plan.subjects[:turn]
    print(f"round {index + 1} of {plan.rounds}: {', '.join(order)}", file=sys.stderr)
    outcomes: list[Outcome] = []
    for shape in plan.shapes:
        for key in order:
            outcomes += run_series(key, shape, shape_sizes(plan, shape), plan)
    return outcomes


def combine(rounds: list[Outcome], count: int) -> Outcome:
    """Return one measurement over its rounds: every run, and each measured round's median."""
    first = rounds[0]
    taken = [o for o in rounds if o.runs]
    if not taken:
        return first
    remark = taken[0].remark
    if len(taken) < count:
        missed = next(o.note for o in rounds if not o.runs)
        remark = "; ".join(filter(None, [remark, f"measured in {len(taken)} of {count} "
                                          f"rounds (the others: {missed})"]))  # fmt: skip
    return Outcome(
        subject=first.subject,
        shape=first.shape,
        n=first.n,
        runs=tuple(run for o in taken for run in o.runs),
        work=taken[0].work,
        warm_up=taken[0].warm_up,
        remark=remark,
        round_medians=tuple(statistics.median(o.runs) for o in taken),
        peak_rss_kb=max((o.peak_rss_kb for o in taken if o.peak_rss_kb), default=None),
    )


def combine_rounds(outcomes: list[Outcome], count: int) -> list[Outcome]:
    """Return one outcome per (subject, shape, N), in the order first measured."""
    grouped: dict[tuple[str, Shape, int], list[Outcome]] = {}
    for outcome in outcomes:
        grouped.setdefault((outcome.subject, outcome.shape, outcome.n), []).append(outcome)
    return [combine(rounds, count) for rounds in grouped.values()]


def progress(outcome: Outcome) -> None:
    """Print one line per measurement to stderr."""
    stats = outcome.stats
    if stats is None:
        detail = outcome.note or ""
    else:
        detail = (
            f"median {format_seconds(stats.median)} ({outcome.per_node_us:,.1f} µs/node), "
            f"{len(stats.runs)} runs, spread {stats.spread:.0%}"
        )
    print(f"  {outcome.shape.value:<13} {outcome.subject:<16} N={outcome.n:<6} {detail}",
          file=sys.stderr, flush=True)  # fmt: skip


def main(argv: list[str]) -> int:
    """Run the plan, print the report, and write it when asked."""
    plan, out, mode = parse_plan(argv)
    facts = machine_facts()
    started = time.perf_counter()
    labels = {key: SUBJECTS[key].label for key in plan.subjects}
    results = Results(labels)
    measured = [o for index in range(plan.rounds) for o in run_round(plan, index)]
    results.outcomes = combine_rounds(measured, plan.rounds)
    elapsed_s = time.perf_counter() - started
    info = RunInfo(mode, plan.budget_s, max(plan.sizes), elapsed_s, facts, plan.rounds)
    report = render(results, info)
    print(report)
    if out is not None:
        out.write_text(report)
        print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
