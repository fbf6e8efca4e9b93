"""Measure one subject on one shape over growing sizes; print one JSON line per event.

`bench.run` starts this in a fresh process per (subject, shape), so one implementation's
garbage and caches never bill another, and a run that blows its budget can be killed.
Usage: python -m bench.series SUBJECT SHAPE SIZES BUDGET_S TARGET_S  (SIZES like 10,100,1000)
"""

from __future__ import annotations

import gc
import json
import resource
import sys
import traceback
from typing import Any

from bench.measure import MIN_RUNS, OverBudget, format_seconds, measure, predict
from bench.peers import PEER_SUBJECTS
from bench.shapes import Shape
from bench.subjects import BRAID_SUBJECTS, Prepared, Subject, refused

SUBJECTS: dict[str, Subject] = {s.key: s for s in (*BRAID_SUBJECTS, *PEER_SUBJECTS)}


def emit(record: dict[str, Any]) -> None:
    """Print one JSON line and flush it, so the parent sees progress as it happens."""
    print(json.dumps(record), flush=True)


def checker(prepared: Prepared) -> Any:
    """Return a check that the last run executed every work node."""

    def check() -> None:
        done = prepared.work_done()
        if done != prepared.expected:
            raise RuntimeError(f"ran {done} work nodes, expected {prepared.expected}")

    return check


def measure_size(
    subject: Subject,
    shape: Shape,
    n: int,
    budgets: tuple[float, float],
    points: list[tuple[int, float]],
) -> dict[str, Any]:
    """Return the record of one size: its runs, or why it was skipped."""
    budget_s, target_s = budgets
    record: dict[str, Any] = {"event": "result", "n": n}
    reason = refused(shape, n) or subject.unsupported(shape, n)
    expected = predict(points, n)
    if reason is None and expected is not None and expected * (1 + MIN_RUNS) > budget_s:
        reason = (
            f"skipped: over budget (predicted {format_seconds(expected)} per run "
            f"from the smaller sizes; a warm-up and {MIN_RUNS} runs exceed {budget_s:.0f} s)"
        )
    if reason is not None:
        return {**record, "skipped": reason}
    prepared = subject.prepare(shape, n)
    try:
        stats, warm_up = measure(
            prepared.run, prepared.reset, checker(prepared), budget_s, target_s
        )
    except OverBudget as over:
        return {**record, "skipped": str(over), "warm_up": over.warm_up_s}
    points.append((n, stats.median))
    measured = {"runs": list(stats.runs), "warm_up": warm_up, "work": prepared.expected}
    # The process's peak so far (kB on Linux): sizes run in ascending order, so it is the
    # peak of this N's runs unless a smaller N's garbage stayed larger.
    measured["peak_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {**record, **measured, "remark": prepared.remark}


def main(argv: list[str]) -> int:
    """Measure every size in order; a failure is recorded, and ends the series."""
    key, shape_name, sizes_text, budget_text, target_text = argv
    subject, shape = SUBJECTS[key], Shape(shape_name)
    budgets = (float(budget_text), float(target_text))
    points: list[tuple[int, float]] = []
    # As a Braid worker process does at start (braid/celery.py): the objects this process
    # began with (three engines' modules, about 46,000) leave the garbage collector's
    # passes. Otherwise each full collection a large run triggers walks them all: three
    # per fork of 10,000 took 114 ms of its 450 (47 ms frozen), none at 1,000, which made
    # the last-step exponents measure the host process as much as the engine. Every
    # subject, peers included, runs so.
    gc.collect()
    gc.freeze()
    for n in (int(size) for size in sizes_text.split(",")):
        emit({"event": "start", "n": n})
        try:
            emit(measure_size(subject, shape, n, budgets, points))
        except Exception as error:
            traceback.print_exc()
            emit({"event": "result", "n": n, "error": f"{type(error).__name__}: {error}"})
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
