"""A step that kills its worker process every time fails its run instead of looping forever.

The expression limits keep every known crash of the native CEL library out of reach, so
these tests lift them to make the evaluator crash for real: a 14,000-term `1-1-...-1`
compiles, then overflows the native stack when it is evaluated.
"""

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db.models import F
from django.test import override_settings

from designer import services as flows
from engine.core.expression_limits import Limits
from engine.core.expressions import configure_limits
from engine.core.validation import validate
from engine.models import Run, TraceEvent
from engine.runtime import attempts, runs, step
from runs import services
from tests.django.test_durable__workers import (  # noqa: F401  (cluster is a fixture)
    cluster,
    stop,
    wait_finished,
    worker,
)

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]

LIFTED = {"max_length": 100_000, "max_depth": 100_000}
CRASHING: dict[str, Any] = {
    "format": "braid.graph/1",
    "name": "Crashes the evaluator",
    "state": {"n": {"reducer": "overwrite"}},
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "calc", "type": "set", "values": {"n": "-".join(["1"] * 14_000)}},
        {"id": "done", "type": "end"},
    ],
    "edges": [{"source": "start", "target": "calc"}, {"source": "calc", "target": "done"}],
}


@pytest.fixture
def lifted_limits() -> Iterator[None]:
    """Let this process store the crashing flow; the defaults come back afterwards."""
    configure_limits(**LIFTED)
    yield
    defaults = Limits()
    configure_limits(max_length=defaults.max_length, max_depth=defaults.max_depth)


def run_on_a_crashing_worker(
    servers: dict[str, Any], document: dict[str, Any], slug: str, seconds: float
) -> Run:
    """Store the flow, run it on a worker (with a sweeper) that lifts the limits too, and
    return the run once it finished.

    The run is started here, where the limits are lifted as well; the worker's sweeper
    resumes it, as it resumes a stored run at every start of `make run`.
    """
    flows.import_graph(User.objects.get(username="analyst"), document, slug, True)
    env = {**servers["env"], "BRAID_CEL_MAX_LENGTH": "100000", "BRAID_CEL_MAX_DEPTH": "100000"}
    crashing = worker(env, "crashing", servers["tmp"] / "crashing.log", beat=True)
    try:
        version = services.latest_version(slug)
        run = runs.create_run(services.resolve_graphs(version.graph), slug, {}, version)
        (finished,) = wait_finished([str(run.pk)], seconds)
    finally:
        stop(crashing)
    return finished


def test_a_step_that_kills_the_worker_every_time_fails_the_run_after_three_tries(
    cluster: dict[str, Any],  # noqa: F811  (the fixture imported above)
    lifted_limits: None,
) -> None:
    run = run_on_a_crashing_worker(cluster, CRASHING, "crashing", 120)
    assert run.status == "failed"
    assert run.error == (
        "applying start killed the worker process 3 times; the run fails instead "
        "of being resumed again (BRAID_STEP_MAX_ATTEMPTS=3)"
    )
    assert run.step_attempts == 0
    assert list(run.pending_events.filter(applied_at=None)) == []
    failed = TraceEvent.objects.filter(run=run, event="run.failed").values_list("detail", flat=True)
    assert [detail.get("error") for detail in failed] == [run.error]


AFTER_A_TASK = {
    **CRASHING,
    "name": "Crashes the evaluator after a task",
    "nodes": [*CRASHING["nodes"], {"id": "work", "type": "task", "action": "noop"}],
    "edges": [{"source": "start", "target": "work"}, {"source": "work", "target": "calc"},
              {"source": "calc", "target": "done"}],
}  # fmt: skip


def test_a_step_applying_an_action_result_that_kills_the_worker_fails_the_run(
    cluster: dict[str, Any],  # noqa: F811  (the fixture imported above)
    lifted_limits: None,
) -> None:
    """The first delivery applies the result in the transaction that records it, without
    counting (engine.runtime.results.record_and_advance); the kill leaves its dispatch to a dead
    claimer, the sweeper sends it again, and from then on every attempt is counted."""
    run = run_on_a_crashing_worker(cluster, AFTER_A_TASK, "crashing-late", 150)
    key = run.pending_events.exclude(key="start").get().key
    assert key == f"{run.pk}|work|root:1|1"
    assert run.status == "failed"
    assert run.error == (
        f"applying {key} killed the worker process 3 times; the run fails instead "
        "of being resumed again (BRAID_STEP_MAX_ATTEMPTS=3)"
    )
    assert run.step_attempts == 0
    dispatch = run.dispatches.get()
    assert dispatch.completed_at is not None


@override_settings(BRAID_STEP_MAX_ATTEMPTS=2)
@pytest.mark.parametrize("counted_meanwhile", [0, 1])
def test_a_step_begun_more_often_than_allowed_fails_the_run_with_its_event_keys(
    counted_meanwhile: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two earlier tries died. The step that sees too many takes its attempt back and looks
    twice more without counting; live workers may count meanwhile (a redelivery that will
    find the run taken), and are not taken for kills."""
    run = runs.create_run(
        {"main": flows_graph()}, "counted", {}, None, User.objects.create(username="starter")
    )
    Run.objects.filter(pk=run.pk).update(step_attempts=2)  # two earlier tries died
    seen_at_backoff: list[int] = []

    def others_count() -> None:
        seen_at_backoff.append(Run.objects.get(pk=run.pk).step_attempts)
        Run.objects.filter(pk=run.pk).update(step_attempts=F("step_attempts") + counted_meanwhile)

    monkeypatch.setattr(attempts, "crowded_backoff", others_count)

    step.advance(str(run.pk))

    run.refresh_from_db()
    assert run.status == "failed"
    assert run.error == (
        "applying start killed the worker process 2 times; the run fails instead "
        "of being resumed again (BRAID_STEP_MAX_ATTEMPTS=2)"
    )
    assert run.step_attempts == 0
    # The looks count nothing: only the others' attempts come between them.
    assert seen_at_backoff == [2, 2 + counted_meanwhile]


def test_a_step_that_raises_takes_its_attempt_back() -> None:
    run = runs.create_run(
        {"main": flows_graph()}, "raises", {}, None, User.objects.create(username="starter")
    )

    def broken(*args: object, **kwargs: object) -> None:
        raise ConnectionError("the database went away")

    original = step.commit_step
    step.commit_step = broken
    try:
        with pytest.raises(ConnectionError):
            step.advance(str(run.pk))
    finally:
        step.commit_step = original

    run.refresh_from_db()
    assert (run.status, run.step_attempts) == ("running", 0)


@override_settings(BRAID_STEP_MAX_ATTEMPTS=2)
def test_attempts_that_live_workers_counted_at_the_same_moment_do_not_fail_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = runs.create_run(
        {"main": flows_graph()}, "crowded", {}, None, User.objects.create(username="starter")
    )
    # Two other workers counted an attempt at this step just now; they find the run taken
    # and take their attempts back while this one waits.
    Run.objects.filter(pk=run.pk).update(step_attempts=2)
    waits: list[str] = []

    def others_take_theirs_back() -> None:
        waits.append("backed off")
        Run.objects.filter(pk=run.pk).update(step_attempts=F("step_attempts") - 2)

    # Not time.sleep itself: the live publisher's thread sleeps too (the test was flaky).
    monkeypatch.setattr(attempts, "crowded_backoff", others_take_theirs_back)

    assert step.advance(str(run.pk)) == 1

    run.refresh_from_db()
    assert (run.status, run.state, run.step_attempts) == ("completed", {"n": 0}, 0)
    assert waits == ["backed off"]


def flows_graph() -> Any:
    """The validated graph of a start -> set -> end flow."""
    start, calc, end = CRASHING["nodes"]
    report = validate({**CRASHING, "nodes": [start, {**calc, "values": {"n": "1 - 1"}}, end]}, {})
    assert report.graph is not None
    return report.graph
