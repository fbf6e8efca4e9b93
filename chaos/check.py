"""The invariants checked after the drain, and the table they are printed in."""

from collections import Counter
from pathlib import Path
from typing import Any

from chaos.oracle import compare
from chaos.traffic import TERMINAL, regressed
from chaos.waits import EventWaits, Wait, Window, classify
from chaos.workload import PlannedRun

COMPLETIONS = ("action.completed", "action.failed")
FINAL_ROW_EVENTS = ("node.completed", "node.failed")
LATE_EVENTS = "events unapplied longer than one sweep interval"


def check(chaos: Any, planned: list[PlannedRun], traffic: Any,
          windows: list[Window]) -> dict[str, Any]:  # fmt: skip
    """Check every invariant on every run; return the counts and the first examples."""
    from django.db import connection

    from engine.models import Run

    connection.close()  # a fault may have ended the driver's connection
    traffic.waits.sample(full=True)  # the last look reads every event
    late, exempt = classify(traffic.waits.over.values(), windows, traffic.waits.limit_s)
    runs = list(Run.objects.all())
    by_number: dict[int, list[Run]] = {}
    for run in runs:
        number = int(str((run.input or {}).get("salt", "x.-1")).split(".")[1])
        by_number.setdefault(number, []).append(run)
    found = Findings()
    for plan in planned:
        if plan.number not in by_number:
            found.note("lost", f"run {plan.number} ({plan.slug}) has no row")
    for run in runs:
        found.check_run(run)
    return {
        "statuses": dict(Counter(run.status for run in runs)),
        "start_retries": traffic.start_retries,
        "decisions": traffic.decisions,
        "row_samples": traffic.samples,
        "longest_without_lease_s": round(traffic.longest_orphan_s, 1),
        "invariants": {
            "lost runs": found.counts["lost"],
            "stuck runs": found.counts["stuck"],
            "running without a live lease": found.counts["unleased"]
            + len(traffic.orphans_over_limit),
            "duplicate completions": found.counts["duplicates"],
            "oracle mismatches": found.counts["mismatches"],
            "row regressions seen live": len(traffic.regressions),
            "row regressions in the trace": found.counts["trace regressions"],
            "runs started twice": len(runs) - len(by_number),
            LATE_EVENTS: len(late),
        },
        "unapplied": waits_figures(traffic.waits, exempt),
        "orphans": sorted(traffic.orphans_over_limit),
        "examples": {
            **found.examples,
            "live regressions": traffic.regressions[:5],
            "unapplied too long": [w.describe() for w in late[:5]],
            "their runs' events": [timeline(w) for w in late[:5]],
            "their runs' log lines": log_lines(chaos.var_dir, {w.run for w in late[:5]}),
        },
    }


def log_lines(var_dir: Path, runs: set[str], limit: int = 12) -> list[str]:
    """The processes' log lines that name one of the runs (a send that failed, a sweep
    that advanced it, a step that raised), first `limit` of them, each cut to 400
    characters: the processes log JSON with a time on every line (worker_settings)."""
    found: list[str] = []
    for log in sorted(var_dir.glob("*.log")):
        with log.open(errors="replace") as lines:
            found += [f"{log.stem}: {line.strip()[:400]}" for line in lines
                      if any(run in line for run in runs)]  # fmt: skip
    return found[:limit]


def timeline(wait: Wait, around_s: float = 5.0) -> str:
    """The events of a late wait's run from `around_s` before it began to 1 s after it
    ended, each created and applied on the database's clock: whether the run was stepped
    meanwhile without taking it (a lost wake-up), or not stepped at all."""
    import datetime as dt

    from engine.models import PendingEvent

    events = PendingEvent.objects.filter(
        run_id=wait.run, created_at__gte=wait.created_at - dt.timedelta(seconds=around_s),
        created_at__lte=wait.ended_at + dt.timedelta(seconds=1),
    ).order_by("created_at", "id")  # fmt: skip
    return f"run {wait.run}: " + "; ".join(
        f"{e.created_at:%H:%M:%S.%f} -> "
        f"{f'{e.applied_at:%H:%M:%S.%f}' if e.applied_at else 'unapplied'} {e.key[-48:]}"
        for e in events)  # fmt: skip


def waits_figures(waits: EventWaits, exempt: list[Wait]) -> dict[str, Any]:
    """The reported figures of the events' waits: how many were measured, the longest of
    all, and the waits over the limit that a fault explains (not an invariant)."""
    longest_exempt = max(exempt, key=lambda w: w.seconds, default=None)
    return {
        "limit_s": waits.limit_s,
        "measured": waits.measured,
        "longest_s": round(waits.longest.seconds, 2) if waits.longest else 0.0,
        "longest": waits.longest.describe() if waits.longest else "",
        "exempt": len(exempt),
        "longest_exempt_s": round(longest_exempt.seconds, 2) if longest_exempt else 0.0,
        "over_limit": [w.describe() for w in sorted(waits.over.values(), key=lambda w: w.event)],
    }


class Findings:
    """What the checks found: a count per kind, and the first five examples of each."""

    def __init__(self) -> None:
        from django.utils import timezone

        from engine.runtime import leases

        self.counts: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = {}
        self.now = timezone.now()
        self.alive = set(leases.alive_names().values_list("name", flat=True))

    def note(self, kind: str, text: str, count: int = 1) -> None:
        """Count `count` of a kind, keeping the text as an example while there are few."""
        self.counts[kind] += count
        examples = self.examples.setdefault(kind, [])
        if len(examples) < 5:
            examples.append(text)

    def check_run(self, run: Any) -> None:
        """Check one run's invariants."""
        from engine.models import Dispatch, TraceEvent

        open_dispatches = Dispatch.objects.filter(run=run, completed_at=None)
        self.check_moving(run, open_dispatches)
        trace = list(TraceEvent.objects.filter(run=run).order_by("seq"))
        self.check_leased(run, trace, list(open_dispatches))
        seen = Counter((t.node, t.execution_id, t.detail.get("attempt"))
                       for t in trace if t.event in COMPLETIONS)  # fmt: skip
        for key, count in seen.items():
            if count > 1:
                self.note("duplicates", f"{run.pk} {key} completed {count} times", count - 1)
        self.counts["trace regressions"] += audit_rows(run, trace, self.note_example)
        problems = compare(run)
        if problems:
            self.note("mismatches", f"{run.pk} {run.label}: " + " | ".join(problems)[:1500])

    def note_example(self, kind: str, text: str) -> None:
        """Keep an example whose count its finder returns."""
        self.note(kind, text, count=0)

    def check_moving(self, run: Any, open_dispatches: Any) -> None:
        """A run not finished waits on a person or a timer, or it is stuck; stuck with
        nothing that could move it, it is lost."""
        from approvals.models import ApprovalRequest
        from engine.models import PendingEvent, Timer

        if run.status in TERMINAL:
            return
        open_approvals = ApprovalRequest.objects.filter(run=run, status="open").count()
        future_timers = Timer.objects.filter(run=run, due_at__gt=self.now).count()
        if run.status == "waiting" and (open_approvals or future_timers):
            return
        unapplied = PendingEvent.objects.filter(run=run, applied_at=None).count()
        self.note("stuck", f"{run.pk} {run.label} {run.status}: {unapplied} unapplied events, "
                           f"{open_dispatches.count()} open actions")  # fmt: skip
        if not (unapplied or open_dispatches.exists() or Timer.objects.filter(run=run)):
            self.note("lost", f"{run.pk} {run.status} with nothing left that could move it")

    def check_leased(self, run: Any, trace: list[Any], open_dispatches: list[Any]) -> None:
        """A task shown running has an open action a live worker holds."""
        from monitor import reading

        tasks = {t.node for t in trace if t.event == "action.dispatched"}
        for path, color in reading.run_tree(run)["colors"].items():
            if color != "running" or path not in tasks:
                continue  # a foreach, loop or subflow runs while what it holds runs
            live = [d for d in open_dispatches if d.command.get("node") == path
                    and d.claimed_by in self.alive]  # fmt: skip
            if not live:
                self.note("unleased", f"{run.pk} {path} shows running with no live lease")


def audit_rows(run: Any, trace: list[Any], note: Any) -> int:
    """A row may hold no older execution or attempt than one its trace shows finished there,
    and for that same execution and attempt it must be finished too."""
    from engine.core.execution_ids import ExecutionId
    from engine.models import NodeState

    newest: dict[str, tuple[str, int, str]] = {}
    for event in trace:
        if event.event not in FINAL_ROW_EVENTS or not event.node:
            continue
        attempt = int(event.detail.get("attempt", 0) or 0)
        status = "completed" if event.event == "node.completed" else "failed"
        key = (ExecutionId.parse(event.execution_id).encode(), attempt, status)
        if event.node not in newest or key[:2] >= newest[event.node][:2]:
            newest[event.node] = key
    rows = {r.node: r for r in NodeState.objects.filter(run=run)}
    count = 0
    for node, (detail, _attempt, status) in newest.items():
        row = rows.get(node)
        if row is None:
            count += 1
            note("trace regressions", f"{run.pk} {node}: finished in the trace, no row")
            continue
        stored = (row.status_detail, row.attempt, row.status)
        if stored[0] < detail or (stored[0] == detail and regressed((detail, row.attempt, status),
                                                                   stored)):  # fmt: skip
            count += 1
            note("trace regressions", f"{run.pk} {node}: row {stored} behind the trace {detail}")
    return count


def table(summary: dict[str, Any]) -> str:
    """The summary as a Markdown table, with the run's figures above it."""
    faults = ", ".join(f"{kind} {count}" for kind, count in summary["fault_counts"].items())
    lines = [
        f"chaos seed {summary['seed']}: {summary['runs']} runs on {summary['workers']} "
        f"{summary.get('pool', 'prefork')} workers x {summary['concurrency']}; workload "
        f"{summary['workload_s']} s, drain {summary['drain_s']} s "
        f"({'drained' if summary['drained'] else 'NOT drained'})",
        f"faults: {faults} (crashes after commit that fired: {summary['crashes_fired']}, "
        f"stepping {[(c['run'], c['at_s']) for c in summary.get('crashes_after_commit', [])]}); "
        f"every {summary['duplicate_every']}th message sent twice",
        f"worker restarts: {summary['restarts']}; run statuses: {summary['statuses']}; "
        f"decisions {summary['decisions']}; start retries {summary['start_retries']}; longest an "
        f"action went without a live worker: {summary['longest_without_lease_s']} s",
        unapplied_line(summary["unapplied"]),
        "",
        "| invariant | count |",
        "| --- | --- |",
        *[f"| {name} | {count} |" for name, count in summary["invariants"].items()],
    ]
    for pk in sorted(summary.get("orphans", []))[:5]:
        lines.append(f"  without a lease over 30 s: dispatch {pk}")
    for kind, texts in summary["examples"].items():
        for text in texts:
            lines.append(f"  {kind}: {text}")
    if summary["invariants"].get(LATE_EVENTS):
        # What a late wait was measured against: each window on the database's clock.
        lines.append("  fault windows: " + "; ".join(summary.get("fault_windows", [])))
    return "\n".join(lines)


def unapplied_line(figures: dict[str, Any]) -> str:
    """The events' waits in a line above the table."""
    return (f"inbox events measured {figures['measured']}; longest unapplied "
            f"{figures['longest_s']} s; over {figures['limit_s']:g} s but explained by a fault: "
            f"{figures['exempt']} (longest {figures['longest_exempt_s']} s)")  # fmt: skip
