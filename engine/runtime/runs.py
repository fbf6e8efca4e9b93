"""What the apps above ask of the durable runtime: start a run, cancel it, retry its failed
action, or drive it in this process."""

import uuid
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F, Model

from engine import live
from engine.core.events import Cancel, Redrive, RunStatus, Start
from engine.core.graph import Graph
from engine.core.inputs import check_input
from engine.core.runtime import parse_time
from engine.core.state import MAIN, RunState
from engine.models import Dispatch, Run, RunPart, Runtime, Timer
from engine.runtime import clock, observers
from engine.runtime.attempts import holding_run
from engine.runtime.backends import backend
from engine.runtime.inbox import advance_after_commit, submit
from engine.runtime.results import run_actions
from engine.runtime.state_cache import run_graphs
from engine.runtime.step import advance
from engine.runtime.store import DjangoStore


def create_run(
    graphs: dict[str, Graph], label: str, input_value: Any,
    flow_version: Model | None = None, started_by: AbstractBaseUser | None = None,
    idempotency: tuple[str, str] = ("", ""),
) -> Run:  # fmt: skip
    """Store a new run with its Start event; a worker advances it after the commit.

    `flow_version` is what the run's `flow_version` foreign key points at. An input that
    does not match the flow's `input` schema raises InputRejected first. With
    `idempotency` (a key and the request's digest), a run the same user started with the
    same key raises IntegrityError and nothing is stored.
    """
    check_input(graphs[MAIN].input, input_value)
    run_id = str(uuid.uuid4())
    run = DjangoStore(flow_version, started_by, Runtime.DURABLE, idempotency).new_run(
        run_id, label, input_value, {key: g.to_json() for key, g in graphs.items()}
    )
    # The run and its Start event together (one statement on PostgreSQL; issue 33 counted
    # six, at 4.6 ms a start), returned as inserted, not read again.
    backend().start_run(run, "start", Start(at=clock.now_text(), input=input_value).to_json())
    advance_after_commit(run_id)
    live.changed(run_id)
    return run


def cancel(run: Run, by: str, reason: str = "") -> None:
    """Ask for a run to be cancelled (applied by the next advance)."""
    submit(str(run.pk), "cancel", Cancel(at=clock.now_text(), by=by, reason=reason))


class RetryRefused(Exception):
    """A run that cannot be retried, with the reason."""


def retry(run_id: str, by: str) -> None:
    """Re-run the failed action of a failed run from the state just before it failed.

    What had completed stays completed; the action gets the next attempt. Results that
    arrived for the run's other actions after the failure are applied again, timers the
    failure cancelled are set again, and approval requests it closed open again (with
    the decisions recorded for them, which the failed run refused, applied again).
    """
    with holding_run(run_id, submits=True) as run:
        if run.status != RunStatus.FAILED.value or not run.redrive:
            raise RetryRefused("only a run that an action's failure ended can be retried")
        snapshot, key = run.redrive["snapshot"], run.redrive["key"]
        state = RunState.from_json(snapshot, run_graphs(str(run.pk)))
        waited = set(state.waits)
        run.pending_events.filter(key__in=waited).exclude(key=key).update(applied_at=None)
        due = [Timer(run=run, key=k, due_at=parse_time(d)) for d, k in state.timers()]
        Timer.objects.bulk_create(due, ignore_conflicts=True)
        reopen_approvals(run, [k for k, _ in state.approvals()], by)
        RunPart.objects.filter(run=run).delete()  # the whole snapshot replaces the parts
        Run.objects.filter(pk=run.pk).update(
            snapshot=snapshot, status=state.status.value, error="", redrive=None,
            snapshot_version=F("snapshot_version") + 1,
        )  # fmt: skip
        submit(str(run.pk), f"redrive|{key}|{clock.now().isoformat()}",
               Redrive(at=clock.now_text(), key=key, by=by))  # fmt: skip


def reopen_approvals(run: Run, keys: list[str], by: str) -> None:
    """Open these requests again (the run observers do) and re-apply the decisions
    recorded for them.

    A decision's inbox key is `<approval key>|<user>`; one already counted in the
    restored state is refused again as a second vote, and leaves no trace.
    """
    if not keys:
        return
    observers.approvals_reopened(str(run.pk), keys, by)
    wanted = set(keys)
    decisions = [pk for pk, inbox_key in run.pending_events.values_list("pk", "key")
                 if inbox_key.rpartition("|")[0] in wanted]  # fmt: skip
    run.pending_events.filter(pk__in=decisions).update(applied_at=None)


def drive(run_id: str, max_rounds: int = 10_000) -> int:
    """Drive a run in this process up to the next person or timer; return events applied.

    It advances the run and runs its open actions (with the task's own code) until neither
    finds work. For a process with no worker of its own: `braid decide` under `make run`,
    whose embedded worker lives in the server process.
    """
    applied = 0
    for _ in range(max_rounds):
        advanced = advance(run_id)
        open_ids = list(
            Dispatch.objects.filter(run_id=run_id, completed_at=None)
            .order_by("id")
            .values_list("pk", flat=True)
        )
        if open_ids:
            run_actions(open_ids)
        applied += advanced
        if not advanced and not open_ids:
            break
    return applied
