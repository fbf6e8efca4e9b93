"""Timing under a budget: a warm-up, then at least five timed runs; statistics and growth fits."""

from __future__ import annotations

import gc
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MIN_RUNS = 5
MAX_RUNS = 25
RESAMPLES = 1_000
CONFIDENCE = 0.95


@dataclass(frozen=True, slots=True)
class Stats:
    """The timed runs of one measurement, in seconds."""

    runs: tuple[float, ...]

    @property
    def median(self) -> float:
        """Return the median run time."""
        return statistics.median(self.runs)

    @property
    def low(self) -> float:
        """Return the fastest run."""
        return min(self.runs)

    @property
    def high(self) -> float:
        """Return the slowest run."""
        return max(self.runs)

    @property
    def spread(self) -> float:
        """Return (max - min) / median: how noisy the measurement was."""
        return (self.high - self.low) / self.median if self.median else 0.0


class OverBudget(Exception):
    """The measurement would not fit its time budget; the message says why."""

    def __init__(self, message: str, warm_up_s: float | None = None) -> None:
        super().__init__(message)
        self.warm_up_s = warm_up_s


def timed(run: Callable[[], object], reset: Callable[[], None]) -> float:
    """Return the wall time of one run, after an untimed reset and a garbage collection."""
    reset()
    gc.collect()
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def planned_runs(warm_up_s: float, budget_s: float, target_s: float) -> int:
    """Return how many timed runs fit: at least MIN_RUNS, more when runs are short.

    Short runs repeat until about `target_s` of timed work (at most MAX_RUNS runs).
    """
    fitting = int((budget_s - warm_up_s) / max(warm_up_s, 1e-6))
    if fitting < MIN_RUNS:
        raise OverBudget(
            f"skipped: over budget (warm-up run {format_seconds(warm_up_s)}; "
            f"{MIN_RUNS} runs exceed {budget_s:.0f} s)",
            warm_up_s,
        )
    wanted = max(MIN_RUNS, math.ceil(target_s / max(warm_up_s, 1e-6)))
    return min(wanted, MAX_RUNS, fitting)


def measure(
    run: Callable[[], object],
    reset: Callable[[], None],
    check: Callable[[], None],
    budget_s: float,
    target_s: float,
) -> tuple[Stats, float]:
    """Return the stats of the timed runs and the warm-up time; raise OverBudget.

    `check` runs once after the warm-up, to prove the run did all its work.
    """
    warm_up = timed(run, reset)
    check()
    count = planned_runs(warm_up, budget_s, target_s)
    return Stats(tuple(timed(run, reset) for _ in range(count))), warm_up


def bootstrap_interval(values: Sequence[float]) -> tuple[float, float] | None:
    """Return a 95% bootstrap interval of the median of `values`; None below two values.

    RESAMPLES times, draw len(values) values with replacement and take their median; the
    interval runs from the 2.5th to the 97.5th percentile of those medians. The generator
    is seeded, so a report's intervals do not change when it is rendered again.
    """
    if len(values) < 2:
        return None
    draw = random.Random(0).choices
    medians = sorted(statistics.median(draw(values, k=len(values))) for _ in range(RESAMPLES))
    tail = (1 - CONFIDENCE) / 2
    return medians[int(tail * RESAMPLES)], medians[math.ceil((1 - tail) * RESAMPLES) - 1]


def ratio_interval(top: Sequence[float], bottom: Sequence[float]) -> tuple[float, float] | None:
    """Return a 95% bootstrap interval of median(top) / median(bottom); None when either
    side has fewer than two values.

    Each of RESAMPLES draws resamples both sides with replacement, independently (two
    subjects measured in the same rounds, but not paired by them), and divides the two
    medians. Seeded like bootstrap_interval.
    """
    if len(top) < 2 or len(bottom) < 2:
        return None
    draw = random.Random(0).choices
    ratios = sorted(
        statistics.median(draw(top, k=len(top))) / statistics.median(draw(bottom, k=len(bottom)))
        for _ in range(RESAMPLES)
    )
    tail = (1 - CONFIDENCE) / 2
    return ratios[int(tail * RESAMPLES)], ratios[math.ceil((1 - tail) * RESAMPLES) - 1]


def judged(
    value: float, interval: tuple[float, float] | None, meets: Callable[[float], bool]
) -> str:
    """Return "MET" when a measured ratio meets its target over its whole interval, "MISSED"
    when its median does not, and "NOT SHOWN" when the median does and the interval does
    not: a tie with the target, which is not met. Without an interval (one round) the
    median decides. `meets` must be monotonic, so the interval's two ends stand for it."""
    if not meets(value):
        return "MISSED"
    if interval is None or all(meets(end) for end in interval):
        return "MET"
    return "NOT SHOWN"


def predict(points: Sequence[tuple[int, float]], n: int) -> float | None:
    """Return the expected run time at size n from smaller sizes (never below linear)."""
    if not points:
        return None
    last_n, last_t = points[-1]
    slope = 1.0
    if len(points) >= 2:
        slope = max(1.0, growth(points[-2:]) or 1.0)
    return float(last_t * (n / last_n) ** slope)


def growth(points: Sequence[tuple[int, float]]) -> float | None:
    """Return the least-squares slope of log(time) against log(N); None below two sizes."""
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    denominator = sum((x - mean_x) ** 2 for x in xs)
    if denominator == 0:
        return None
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / denominator


def format_seconds(seconds: float) -> str:
    """Return a duration with a unit that keeps three significant figures."""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"
