"""Bad inbox events and engine bugs: a run skips what it cannot read and fails closed."""

import pytest

from engine import durable
from engine.core.events import ActionCompleted, Command, Event
from engine.core.scheduler import step
from engine.core.state import RunState
from engine.core.stepper import Pick
from engine.models import PendingEvent
from engine.store import DjangoStore
from runs.services import resolve_graphs
from tests.django.durable_driver import drain
from tests.django.test_durable__dispatch import fork_of


@pytest.mark.django_db
def test_an_unreadable_inbox_event_is_skipped_and_the_run_goes_on() -> None:
    run = durable.create_run(resolve_graphs(fork_of(2)), "fork", {})
    PendingEvent.objects.create(run=run, key="junk", event={"kind": "nonsense", "at": "now"})
    run = drain(run)
    assert (run.status, run.state) == ("completed", {"hits": 2})
    assert PendingEvent.objects.filter(run=run, applied_at=None).count() == 0


@pytest.mark.django_db
def test_an_engine_error_fails_the_run_closed_instead_of_failing_the_step_forever(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_step = step

    def broken_step(
        state: RunState, event: Event, pick: Pick | None = None
    ) -> tuple[RunState, list[Command]]:
        if isinstance(event, ActionCompleted):
            raise RuntimeError("boom")
        return real_step(state, event, pick)

    monkeypatch.setattr(durable, "step", broken_step)
    run = durable.create_run(resolve_graphs(fork_of(2)), "fork", {})
    run = drain(run)
    first = f"{run.pk}|t0|root:1:split.b0:1|1"
    assert (run.status, run.error) == (
        "failed",
        f"internal error applying action.completed {first}: RuntimeError('boom')",
    )
    assert PendingEvent.objects.filter(run=run, applied_at=None).count() == 0
    assert durable.advance(str(run.pk)) == 0
    snapshot = DjangoStore().load(str(run.pk)).snapshot
    assert snapshot["status"] == "failed" and snapshot["frames"] == []
