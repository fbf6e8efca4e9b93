"""The invariants checked after the drain, and the table they are printed in."""

from collections import Counter
from typing import Any

from chaos.oracle import compare
from chaos.traffic import TERMINAL, regressed
from chaos.workload import PlannedRun

COMPLETIONS = ("action.completed", "action.failed")
FINAL_ROW_EVENTS = ("node.completed", "node.failed")


def check(chaos: Any, planned: list[PlannedRun], traffic: Any) -> dict[str, Any]:
    """Check every invariant on every run; return the counts and the first examples."""
    from django.db import connection
    from django.utils import timezone

    from approvals.models import ApprovalRequest
    from engine.models import Dispatch, PendingEvent, Run, Timer, TraceEvent
    from engine.runtime import leases
    from monitor import reading

    connection.close()  # a fault may have ended the driver's connection
    now = timezone.now()
    runs = list(Run.objects.all())
    by_number: dict[int, list[Run]] = {}
    for run in runs:
        number = int(str((run.input or {}).get("salt", "x.-1")).split(".")[1])
        by_number.setdefault(number, []).append(run)
    examples: dict[str, list[str]] = {}

    def note(kind: str, text: str) -> None:
        examples.setdefault(kind, [])
        if len(examples[kind]) < 5:
            examples[kind].append(text)

    lost = stuck = unleased = duplicates = mismatches = trace_regressions = 0
    for plan in planned:
        if plan.number not in by_number:
            lost += 1
            note("lost", f"run {plan.number} ({plan.slug}) has no row")
    alive = set(leases.alive_names().values_list("name", flat=True))
    for run in runs:
        run_id = str(run.pk)
        unapplied = PendingEvent.objects.filter(run=run, applied_at=None).count()
        open_dispatches = Dispatch.objects.filter(run=run, completed_at=None)
        open_approvals = ApprovalRequest.objects.filter(run=run, status="open").count()
        future_timers = Timer.objects.filter(run=run, due_at__gt=now).count()
        if run.status not in TERMINAL:
            explained = run.status == "waiting" and (open_approvals or future_timers)
            if not explained:
                stuck += 1
                note("stuck", f"{run_id} {run.label} {run.status}: {unapplied} unapplied events, "
                              f"{open_dispatches.count()} open actions")  # fmt: skip
                if not (unapplied or open_dispatches.exists() or Timer.objects.filter(run=run)):
                    lost += 1
                    note("lost", f"{run_id} {run.status} with nothing left that could move it")
        trace = list(TraceEvent.objects.filter(run=run).order_by("seq"))
        tasks = {t.node for t in trace if t.event == "action.dispatched"}
        for path, color in reading.run_tree(run)["colors"].items():
            if color != "running" or path not in tasks:
                continue  # a foreach, loop or subflow runs while what it holds runs
            live = [d for d in open_dispatches if d.command.get("node") == path
                    and d.claimed_by in alive]  # fmt: skip
            if not live:
                unleased += 1
                note("unleased", f"{run_id} {path} shows running with no live lease")
        seen = Counter((t.node, t.execution_id, t.detail.get("attempt"))
                       for t in trace if t.event in COMPLETIONS)  # fmt: skip
        for key, count in seen.items():
            if count > 1:
                duplicates += count - 1
                note("duplicates", f"{run_id} {key} completed {count} times")
        trace_regressions += audit_rows(run, trace, note)
        problems = compare(run)
        if problems:
            mismatches += 1
            note("mismatches", f"{run_id} {run.label}: " + " | ".join(problems)[:1500])
    statuses = Counter(run.status for run in runs)
    return {
        "statuses": dict(statuses),
        "start_retries": traffic.start_retries,
        "decisions": traffic.decisions,
        "row_samples": traffic.samples,
        "longest_without_lease_s": round(traffic.longest_orphan_s, 1),
        "invariants": {
            "lost runs": lost,
            "stuck runs": stuck,
            "running without a live lease": unleased + len(traffic.orphans_over_limit),
            "duplicate completions": duplicates,
            "oracle mismatches": mismatches,
            "row regressions seen live": len(traffic.regressions),
            "row regressions in the trace": trace_regressions,
            "runs started twice": len(runs) - len(by_number),
        },
        "orphans": sorted(traffic.orphans_over_limit),
        "examples": {**examples, "live regressions": traffic.regressions[:5]},
    }


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
        f"chaos seed {summary['seed']}: {summary['runs']} runs on {summary['workers']} workers "
        f"x {summary['concurrency']}; workload {summary['workload_s']} s, drain "
        f"{summary['drain_s']} s ({'drained' if summary['drained'] else 'NOT drained'})",
        f"faults: {faults} (crashes after commit that fired: {summary['crashes_fired']}); "
        f"every {summary['duplicate_every']}th message sent twice",
        f"worker restarts: {summary['restarts']}; run statuses: {summary['statuses']}; "
        f"decisions {summary['decisions']}; start retries {summary['start_retries']}; longest an "
        f"action went without a live worker: {summary['longest_without_lease_s']} s",
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
    return "\n".join(lines)
