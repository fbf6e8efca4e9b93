"""The results as markdown: machine facts, one table per shape, growth exponents, targets."""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.metadata
import os
import platform
import statistics
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bench.measure import Stats, bootstrap_interval, format_seconds, growth, judged, ratio_interval
from bench.shapes import NESTED_ITEMS, SHAPE_TITLES, Shape

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("braid", "langgraph", "langgraph-checkpoint", "SpiffWorkflow")
LINEAR_LIMIT = 1.15  # a growth exponent at or below this counts as linear
SPEEDUP_TARGET = 5.0

# (peer, Braid subject doing the same work, column title naming the pairing): a Braid task
# calling `noop` and a LangGraph node returning nothing both write nothing; a Braid `set`
# node and a LangGraph node returning {"log": ["x"]} both append one item to `log`.
RATIOS: tuple[tuple[str, str, str], ...] = (
    ("langgraph", "braid", "writes nothing: LangGraph ÷ Braid task"),
    ("langgraph-append", "braid-set", "appends: LangGraph ÷ Braid set"),
    ("langgraph-saver", "braid-snapshot", "writes nothing: LangGraph+saver ÷ Braid+snapshot"),
    ("spiff", "braid", "Spiff ÷ Braid task"),
    ("langgraph-sleep", "braid-sleep", "1 ms sleep: LangGraph ÷ Braid task"),
)
# The variant with real work per node, published in its own section
REAL_WORK = ("braid-sleep", "langgraph-sleep")


@dataclass(frozen=True, slots=True)
class Outcome:
    """One measurement (subject, shape, N): its timed runs, or why there are none.

    Measured over several rounds, `runs` holds every round's timed runs and `round_medians`
    the median of each round; the published median is the median of the rounds' medians.
    """

    subject: str
    shape: Shape
    n: int
    runs: tuple[float, ...] = ()
    work: int = 0
    note: str | None = None  # why there are no runs
    warm_up: float | None = None
    remark: str | None = None  # said about a measured outcome
    round_medians: tuple[float, ...] = ()
    peak_rss_kb: int | None = None  # the series process's peak RSS, highest over the rounds

    @property
    def stats(self) -> Stats | None:
        """Return the statistics of the runs, if any."""
        return Stats(self.runs) if self.runs else None

    @property
    def median(self) -> float | None:
        """Return the median of the rounds' medians (of the runs, within one round)."""
        if self.round_medians:
            return statistics.median(self.round_medians)
        return statistics.median(self.runs) if self.runs else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """Return the 95% bootstrap interval of the median over the rounds, if two or more."""
        return bootstrap_interval(self.round_medians)

    @property
    def per_node_us(self) -> float | None:
        """Return the median run time per work node, in microseconds."""
        median = self.median
        return median / self.work * 1e6 if median is not None and self.work else None


@dataclass
class Results:
    """Every outcome of one benchmark run, with the subjects' labels in column order."""

    labels: dict[str, str]
    outcomes: list[Outcome] = field(default_factory=list)

    def get(self, subject: str, shape: Shape, n: int) -> Outcome | None:
        """Return the outcome of one measurement."""
        for outcome in self.outcomes:
            if (outcome.subject, outcome.shape, outcome.n) == (subject, shape, n):
                return outcome
        return None

    def sizes(self, shape: Shape) -> list[int]:
        """Return the sizes measured for a shape, ascending."""
        return sorted({o.n for o in self.outcomes if o.shape is shape})

    def shapes(self) -> list[Shape]:
        """Return the shapes present, in declaration order."""
        present = {o.shape for o in self.outcomes}
        return [shape for shape in Shape if shape in present]

    def points(self, subject: str, shape: Shape) -> list[tuple[int, float]]:
        """Return (N, median seconds) of a subject's measured sizes of a shape."""
        found = []
        for n in self.sizes(shape):
            outcome = self.get(subject, shape, n)
            median = outcome.median if outcome is not None else None
            if median is not None:
                found.append((n, median))
        return found

    def ratio(self, peer: str, braid: str, shape: Shape, n: int) -> float | None:
        """Return how many times more time per node the peer took than Braid."""
        slow, fast = self.get(peer, shape, n), self.get(braid, shape, n)
        if slow is None or fast is None or not slow.per_node_us or not fast.per_node_us:
            return None
        return slow.per_node_us / fast.per_node_us

    def ratio_interval(
        self, peer: str, braid: str, shape: Shape, n: int
    ) -> tuple[float, float] | None:
        """Return the 95% bootstrap interval of `ratio` over the rounds' medians, if both
        were measured in two rounds or more."""
        slow, fast = self.get(peer, shape, n), self.get(braid, shape, n)
        if slow is None or fast is None or not slow.work or not fast.work:
            return None
        found = ratio_interval(slow.round_medians, fast.round_medians)
        if found is None:
            return None
        per_node = fast.work / slow.work
        return found[0] * per_node, found[1] * per_node


# --------------------------------------------------------------------------------- facts


def command_output(*argv: str) -> str:
    """Return a read-only command's stripped output, or '' when it fails."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, check=False)
    except OSError:
        return ""
    return done.stdout.strip()


def cpu_model() -> str:
    """Return the CPU model name from /proc/cpuinfo."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> str:
    """Return the 1/5/15-minute load averages."""
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


def machine_facts() -> list[tuple[str, str]]:
    """Return what the numbers depend on: CPUs, Python, OS, load."""
    return [
        ("nproc", f"{os.cpu_count()} (usable by this process: {len(os.sched_getaffinity(0))})"),
        ("CPU model", cpu_model()),
        ("Python", sys.version.split()[0] + f" ({platform.python_implementation()})"),
        ("OS", platform.platform()),
        ("load average at the start (1/5/15 min)", load_average()),
    ]


def version(distribution: str) -> str:
    """Return an installed distribution's version."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def package_versions() -> list[tuple[str, str]]:
    """Return the versions of Braid, its peers and its CEL backend."""
    rows = [(name, version(name)) for name in PACKAGES]
    cel = importlib.metadata.packages_distributions().get("cel", ["cel"])[0]
    rows.append((f"{cel} (Braid's CEL)", version(cel)))
    head = command_output("git", "rev-parse", "--short", "HEAD")
    dirty = command_output("git", "diff", "--name-only", "HEAD", "--", "engine")
    changed = ", ".join(dirty.splitlines()) or "none"
    rows.append(
        ("Braid commit", f"{head or 'unknown'} (engine files changed in the tree: {changed})")
    )
    return rows


# --------------------------------------------------------------------------------- provenance

HASHED_SETTINGS = "braid/settings.py"


def sha256_of(path: Path) -> str:
    """Return the hex sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def bench_files() -> list[Path]:
    """Return the files under bench/ that make the bench, sorted: not the reports it writes."""
    found = (ROOT / "bench").rglob("*")
    return sorted(
        path for path in found
        if path.is_file() and path.suffix != ".md" and "__pycache__" not in path.parts
    )  # fmt: skip


def bench_digest(files: list[Path]) -> str:
    """Return one sha256 over every file's relative path and sha256, in path order."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.relative_to(ROOT)}\0{sha256_of(path)}\n".encode())
    return digest.hexdigest()


def provenance_section() -> list[str]:
    """Return the code this report was measured with: hashes, and the tree's changes."""
    files = bench_files()
    status = command_output("git", "status", "--porcelain")
    diff = command_output("git", "diff", "--stat", "HEAD") or "(no changes to tracked files)"
    rows = [
        ("commit", command_output("git", "rev-parse", "HEAD") or "unknown"),
        ("tree dirty (tracked or untracked changes)", "yes" if status else "no"),
        (f"sha256 of bench/ ({len(files)} files, the .md reports excluded)", bench_digest(files)),
        (f"sha256 of {HASHED_SETTINGS}", sha256_of(ROOT / HASHED_SETTINGS)),
    ]
    lines = ["## Provenance", "", *table(["what", "value"], rows), ""]
    lines += ["<details><summary>sha256 per bench file, and git diff --stat HEAD</summary>", ""]
    lines += table(["file", "sha256"], ([f"`{p.relative_to(ROOT)}`", sha256_of(p)] for p in files))
    lines += ["", "```", diff, *(["untracked:", *untracked(status)] if untracked(status) else [])]
    return [*lines, "```", "", "</details>", ""]


def untracked(status: str) -> list[str]:
    """Return the untracked paths in `git status --porcelain` output."""
    return [line[3:] for line in status.splitlines() if line.startswith("??")]


# --------------------------------------------------------------------------------- tables


def table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    """Return a markdown table."""
    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def cell(outcome: Outcome | None) -> str:
    """Return 'µs/node [95% interval]' or a dash for a missing measurement."""
    if outcome is None or outcome.per_node_us is None:
        return "—"
    interval = outcome.interval
    if interval is None:
        return f"{outcome.per_node_us:,.1f} [one round]"
    low, high = (seconds / outcome.work * 1e6 for seconds in interval)
    return f"{outcome.per_node_us:,.1f} [{low:,.1f} to {high:,.1f}]"


def interval_text(outcome: Outcome) -> str:
    """Return the 95% bootstrap interval of the median in seconds, or a dash."""
    interval = outcome.interval
    if interval is None:
        return "—"
    return f"{format_seconds(interval[0])} to {format_seconds(interval[1])}"


def rss_text(outcome: Outcome) -> str:
    """Return the peak RSS in MB, or a dash."""
    return f"{outcome.peak_rss_kb / 1024:,.0f} MB" if outcome.peak_rss_kb else "—"


def times(ratio: float | None) -> str:
    """Return a ratio as '7.3x'."""
    if ratio is None:
        return "—"
    return f"{ratio:.1f}x" if ratio >= 0.1 else f"{ratio:.2g}x"


def ratio_columns(results: Results) -> list[tuple[str, str, str]]:
    """Return the ratio columns whose both subjects were measured."""
    subjects = {o.subject for o in results.outcomes}
    return [r for r in RATIOS if r[0] in subjects and r[1] in subjects]


def shape_table(results: Results, shape: Shape) -> list[str]:
    """Return the side-by-side table of one shape: µs/node per subject, then the ratios."""
    subjects = [key for key in results.labels if any(o.subject == key for o in results.outcomes)]
    ratios = ratio_columns(results)
    header = ["N", *(f"{results.labels[key]}" for key in subjects), *(r[2] for r in ratios)]
    rows = []
    for n in results.sizes(shape):
        values = [cell(results.get(key, shape, n)) for key in subjects]
        quotients = [times(results.ratio(peer, braid, shape, n)) for peer, braid, _ in ratios]
        rows.append([f"{n:,}", *values, *quotients])
    return table(header, rows)


def detail_rows(results: Results, shape: Shape) -> list[list[str]]:
    """Return one row per measured (subject, N): rounds, runs, median, min, max, spread."""
    rows = []
    for key, label in results.labels.items():
        for n in results.sizes(shape):
            outcome = results.get(key, shape, n)
            stats = outcome.stats if outcome else None
            if outcome is None or stats is None or outcome.median is None:
                continue
            rows.append([
                label, f"{n:,}", str(len(outcome.round_medians) or 1), str(len(stats.runs)),
                format_seconds(outcome.median), interval_text(outcome),
                format_seconds(stats.low), format_seconds(stats.high), f"{stats.spread:.0%}",
                cell(outcome).split(" ")[0], rss_text(outcome),
            ])  # fmt: skip
    return rows


def notes(results: Results, shape: Shape) -> list[str]:
    """Return one line per skipped or failed measurement of a shape."""
    lines = []
    for key, label in results.labels.items():
        for n in results.sizes(shape):
            outcome = results.get(key, shape, n)
            said = outcome and (outcome.note or outcome.remark)
            if said:
                lines.append(f"- {label}, N = {n:,}: {said}")
    return lines


def shape_section(results: Results, shape: Shape) -> list[str]:
    """Return the section of one shape."""
    title = SHAPE_TITLES[shape]
    unit = (
        f"N = {NESTED_ITEMS} items, {NESTED_ITEMS * 4} work nodes"
        if shape is Shape.FOREACH_FORK
        else "N work nodes"
    )
    lines = [f"### {title}", "", f"µs per work node ({unit}), median [95% interval]:", ""]
    lines += shape_table(results, shape)
    summary = "rounds, runs, median and its interval, min, max, spread, peak RSS"
    lines += ["", f"<details><summary>{summary}</summary>", ""]
    header = ["subject", "N", "rounds", "runs", "median", "95% interval", "min", "max"]
    header += ["spread", "µs/node", "peak RSS"]
    lines += table(header, detail_rows(results, shape))
    lines += ["", "</details>", ""]
    skipped = notes(results, shape)
    return lines + ([*skipped, ""] if skipped else [])


def headline_section(results: Results, n: int) -> list[str]:
    """Return one row per shape at N (the foreach x fork at its only size)."""
    subjects = [key for key in results.labels if any(o.subject == key for o in results.outcomes)]
    ratios = ratio_columns(results)
    header = ["shape", *(results.labels[key] for key in subjects), *(r[2] for r in ratios)]
    rows = []
    for shape in results.shapes():
        size = n if n in results.sizes(shape) else max(results.sizes(shape))
        values = [cell(results.get(key, shape, size)) for key in subjects]
        quotients = [times(results.ratio(peer, braid, shape, size)) for peer, braid, _ in ratios]
        rows.append([f"{shape.value} (N = {size:,})", *values, *quotients])
    intro = [f"## Headline: µs per work node at N = {n:,}", ""]
    return [*intro, *table(header, rows), ""]


# --------------------------------------------------------------------------------- growth


def exponents(results: Results, subject: str, shape: Shape) -> tuple[float | None, float | None]:
    """Return the fitted exponent over every measured N and over the last two sizes."""
    points = results.points(subject, shape)
    return growth(points), growth(points[-2:])


def exponent_cell(fit: float | None, tail: float | None, points: list[tuple[int, float]]) -> str:
    """Return 'fit 0.97 · last step 1.02 (N 10-10,000)'."""
    if fit is None or tail is None:
        return "—"
    span = f"N {points[0][0]:,}-{points[-1][0]:,}"
    return f"{fit:.2f} · last step {tail:.2f} ({span})"


def growth_section(results: Results) -> list[str]:
    """Return the table of growth exponents (least squares of log time on log N)."""
    shapes = [s for s in results.shapes() if len(results.sizes(s)) > 1]
    rows = []
    for key, label in results.labels.items():
        cells = []
        for shape in shapes:
            fit, tail = exponents(results, key, shape)
            cells.append(exponent_cell(fit, tail, results.points(key, shape)))
        if any(c != "—" for c in cells):
            rows.append([label, *cells])
    intro = [
        "## Growth exponents",
        "",
        "Least-squares slope of log(median time) against log(N) over every measured N, and the",
        "slope of the last step alone (1 = linear, 2 = quadratic; fixed costs pull small-N fits",
        "below 1, so the last step is the honest test of linearity).",
        "",
    ]
    return intro + table(["subject", *(s.value for s in shapes)], rows) + [""]


# --------------------------------------------------------------------------------- targets


# (Braid subject, peer, Braid's name, the peer and the work both do): each pair must reach
# SPEEDUP_TARGET
SPEED_PAIRS: tuple[tuple[str, str, str, str], ...] = (
    ("braid", "langgraph", "Braid task", "LangGraph, both writing nothing"),
    ("braid-set", "langgraph-append", "Braid set", "LangGraph, both appending to `log`"),
    (
        "braid-snapshot",
        "langgraph-saver",
        "Braid task + snapshot/step",
        "LangGraph + InMemorySaver, both writing nothing",
    ),
)
LINEAR_SUBJECTS: tuple[tuple[str, str], ...] = (
    ("braid", "Braid task"),
    ("braid-snapshot", "Braid task + snapshot/step"),
)
TARGET_SHAPES = (Shape.CHAIN, Shape.FORK, Shape.FOREACH)
# The fork of 10,000 is above validate()'s limit: the foreach of 10,000 stands in for it.
LINEAR_SHAPES = (Shape.CHAIN, Shape.FOREACH)


def speed_target(
    results: Results, shape: Shape, n: int, pair: tuple[str, str, str, str] = SPEED_PAIRS[0]
) -> str:
    """Return the verdict on 'Braid at least 5x faster per node than the peer'."""
    braid_key, peer_key, braid_label, _ = pair
    peer_label = results.labels.get(peer_key, peer_key)
    ratio = results.ratio(peer_key, braid_key, shape, n)
    braid, peer = results.get(braid_key, shape, n), results.get(peer_key, shape, n)
    if ratio is None or braid is None or peer is None:
        missing = f"{braid_label} or {peer_label} not measured"
        return f"- **MISSED** — {shape.value}, N = {n:,}: {missing}"
    interval = results.ratio_interval(peer_key, braid_key, shape, n)
    verdict = judged(ratio, interval, lambda x: x >= SPEEDUP_TARGET)
    spread = f" [{interval[0]:.1f} to {interval[1]:.1f}]" if interval else ""
    return (
        f"- **{verdict}** — {shape.value}, N = {n:,}: {braid_label} {braid.per_node_us:,.1f} "
        f"µs/node, {peer_label} {peer.per_node_us:,.1f} µs/node: {ratio:.1f}x{spread} "
        f"(target ≥ {SPEEDUP_TARGET:.0f}x)"
    )


def linear_target(results: Results, shape: Shape, top: int, subject: str = "braid") -> str:
    """Return the verdict on 'Braid linear up to N = 10,000'."""
    points = results.points(subject, shape)
    if top < 10_000:
        return f"- {shape.value}: N = 10,000 is not part of this run"
    if not points or points[-1][0] < top:
        largest = f"largest N measured {points[-1][0]:,}" if points else "nothing measured"
        return f"- **MISSED** — {shape.value}: N = {top:,} not measured ({largest})"
    fit, tail = growth(points), growth(points[-2:])
    assert fit is not None and tail is not None
    verdict = "MET" if tail <= LINEAR_LIMIT else "MISSED"
    return (
        f"- **{verdict}** — {shape.value}: last-step exponent {tail:.2f} from N = "
        f"{points[-2][0]:,} to {top:,} (linear: ≤ {LINEAR_LIMIT}); {fit:.2f} fitted over "
        f"N {points[0][0]:,}-{top:,}"
    )


def targets_section(results: Results, top: int) -> list[str]:
    """Return the targets, each met or missed."""
    lines = ["## Targets", "",
             "A ratio's interval is its 95% bootstrap interval over the rounds (both subjects' "
             "round medians resampled). **MET**: the whole interval meets the target. "
             "**MISSED**: the medians do not. **NOT SHOWN**: the medians meet it and the "
             "interval does not, a tie with the target, which counts as not met. (Runs before "
             "2026-12-08 judged by the medians alone.)", ""]  # fmt: skip
    for pair in SPEED_PAIRS:
        lines += [f"{pair[2]} ≥ {SPEEDUP_TARGET:.0f}x faster per node than {pair[3]}:"]
        lines += [speed_target(results, shape, 1_000, pair) for shape in TARGET_SHAPES]
        lines += [""]
    for subject, label in LINEAR_SUBJECTS:
        lines += [f"{label} linear up to N = 10,000 (the foreach stands for the fork):"]
        lines += [linear_target(results, shape, top, subject) for shape in LINEAR_SHAPES]
        lines += [""]
    return lines


# --------------------------------------------------------------------------------- document


METHOD = """\
How it is measured: in rounds, interleaved over the subjects (3 in `make bench`, 2 in
`make bench-quick`). Each round measures every (shape, subject) once, each in a fresh Python
process, every size of the shape in that process; the subjects' order turns by one place per
round. So every subject gets the same passes at every N, and a slow spell of this shared
machine (a whole process sometimes runs twice as slow) falls on all of them alike. A
measurement's median is the median of its rounds' medians, printed with a 95% bootstrap
interval over the rounds (1,000 resamples of the rounds' medians, seeded; none from a single
round). With 2 or 3 rounds the interval is simply the fastest to the slowest round's median
(each is the resamples' median in over 2.5% of them); more rounds make it narrower.
Peak RSS is `ru_maxrss` of the series process after the size's runs; sizes run in ascending
order in one process, so it is the peak up to that N, highest over the rounds. Per size: the flow
is built and compiled untimed (Braid: generated document, `validate()`, `Graph.from_json`;
LangGraph: `StateGraph.compile`; Spiff: BPMN parse), one warm-up run, then at least 5 timed
runs (more for short runs), each after `gc.collect()`, each a whole run from a fresh
store/thread to completion. Each series process first freezes the objects it started with
(`gc.freeze()`, as a Braid worker process does), so that a large run's full collections do
not walk three engines' modules. A work node is one no-op call: a Braid `task` with the `noop`
action (or a `set` node evaluating `['x']` into an `append` field), a LangGraph node, a BPMN
script task running `pass`. Ratios and targets pair equal work, and name their pairing: a Braid
task against a LangGraph node that returns nothing (both write nothing), a Braid `set` against a
LangGraph node returning `{"log": ["x"]}` (both append one item through a reducer).
Braid's fork gathers through `slots` b1..bN; LangGraph fans out with `Send` into an
`operator.add` field (its foreach is `Send` with `max_concurrency` 64, its
foreach x fork is `Send` into a fork/join subgraph); Spiff uses a BPMN parallel gateway split
and join. "+snapshot/step" commits after every step what the step changed (the parts of
`engine.core.parts.take_delta`, JSON-encoded by the InMemoryStore); "+saver" is
LangGraph's `InMemorySaver` with `durability="sync"` (each checkpoint written before the next
step, as Braid's snapshot is; LangGraph's default is "async"). A ratio is the peer's µs/node
over Braid's: above 1, Braid is faster. The machine is shared and noisy: compare side by side,
not across runs.

The method changed on 2026-12-06 (issue 33), after the fair foreach pairing had missed (4.7x):
before, every target paired Braid task (writing nothing) with a LangGraph that appended to a
reduced field, the saver ran with LangGraph's default `durability="async"`, and only some
subjects got a second, best-of-two pass. Figures from before are not comparable with these."""


REAL_WORK_INTRO = """\
Each work node sleeps 1 ms and writes nothing: a Braid task whose `noop` action sleeps, and a
LangGraph node that sleeps. Braid's InProcessRuntime runs the branches of a fork or foreach one
after another in its one thread; LangGraph runs a step's parallel nodes on its thread pool
(`max_concurrency` unset for the fork, so Python's default of min(32, CPUs + 4) threads; 64 for
the foreach). So this table shows what in-process Braid gives up when nodes wait on real work,
which a Braid deployment spreads over Celery workers instead. Up to N = 1,000."""


def split(results: Results) -> tuple[Results, Results]:
    """Return the results without the real-work variant, and the variant's alone."""
    parts = []
    for wanted in (False, True):
        labels = {k: v for k, v in results.labels.items() if (k in REAL_WORK) is wanted}
        outcomes = [o for o in results.outcomes if (o.subject in REAL_WORK) is wanted]
        parts.append(Results(labels, outcomes))
    return parts[0], parts[1]


def real_work_section(results: Results) -> list[str]:
    """Return the tables of the real-work variant, one per shape, or nothing if not run."""
    if not results.outcomes:
        return []
    lines = ["## Real work per node: a 1 ms sleep", "", REAL_WORK_INTRO, ""]
    for shape in results.shapes():
        lines += shape_section(results, shape)
    return lines


@dataclass(frozen=True, slots=True)
class RunInfo:
    """How the benchmark was run."""

    mode: str
    budget_s: float
    top: int  # the largest N
    elapsed_s: float
    facts: list[tuple[str, str]]
    rounds: int


def render(results: Results, info: RunInfo) -> str:
    """Return the whole markdown report."""
    today = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Braid engine-core benchmarks",
        "",
        f"Written by `make {info.mode}` on {today} in {info.elapsed_s / 60:.1f} min, "
        f"with a budget of {info.budget_s:.0f} s per measurement, in {info.rounds} "
        "interleaved rounds.",
        "",
        "The durable runtime beside Temporal, DBOS, LangGraph with its PostgreSQL saver and raw "
        "Celery (W1-W4, kill -9 per subject) is in [PEERS.md](PEERS.md), written by "
        "`make bench-peers`.",
        "",
        "## Machine",
        "",
    ]
    facts = [*info.facts, ("load average at the end (1/5/15 min)", load_average())]
    lines += table(["fact", "value"], facts)
    lines += ["", "## Packages", "", *table(["package", "version"], package_versions())]
    lines += ["", *provenance_section(), METHOD, ""]
    results, real_work = split(results)
    lines += targets_section(results, info.top)
    lines += headline_section(results, min(1_000, info.top))
    lines += ["## Results per shape", ""]
    for shape in results.shapes():
        lines += shape_section(results, shape)
    lines += growth_section(results)
    lines += real_work_section(real_work)
    lines += [
        "## Rerun",
        "",
        "- `make bench` — everything, N up to 10,000, 3 rounds; writes this file. Before the "
        "rounds and the new subjects, one pass and a second for short measurements took "
        "5.2 min: expect 15 to 20.",
        "- `make bench-quick` — N up to 1,000, 2 rounds (5 minutes on this 2-core machine "
        "under a load of 2); prints the same tables.",
        "- One slice: `.venv/bin/python -m bench.run --shapes fork --subjects braid,langgraph "
        "--sizes 10,100,1000`.",
        "",
    ]
    return "\n".join(lines)
