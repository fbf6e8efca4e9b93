"""A state caught up from the parts changed since its version is the stored state exactly.

A run's events land on many worker processes; one whose cached state is older than the
run patches it with the parts changed since (`catch_up`) instead of reading every part.
Runs are generated (the demo flows and generated fork/gather flows, driven by random moves
that complete, fail, fire, decide and cancel), and every step is committed as a store
would. Then, for pairs of versions, a state held in memory since the older one is caught
up to the newer one and compared with the state restored from all of the newer one's
parts: the same snapshot, the same marks of what is stored, the same activation index and
lineage views, and the same next step (commands and delta).
"""

import json
import random
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core.events import Command, Event, Start
from engine.core.members import Members, members
from engine.core.parts import GONE, assemble, catch_up, patched_writes, restore, take_delta
from engine.core.scheduler import step
from engine.core.state import RunState
from engine.core.store import apply_parts
from engine.core.values import JSON
from tests.core.harness import EPOCH, Driver
from tests.core.test_colors__walks import DEMOS, driver_for, step_randomly
from tests.core.test_scheduler__order import generated_flows


@dataclass
class Version:
    """What the store held after one commit: the head, the parts and the keys changed."""

    head: dict[str, Any]
    parts: dict[str, str]
    changed: set[str]


@dataclass
class Committed:
    """The events a driver sent, each step committed as a store would commit it."""

    events: list[Event] = field(default_factory=list)
    versions: list[Version] = field(default_factory=list)
    parts: dict[str, str] = field(default_factory=dict)
    restoring: bool = False


def record(driver: Driver, restoring: bool = False) -> Committed:
    """Make a driver commit a delta after every step it takes, and keep each version.

    With `restoring`, each step runs on the state restored from the parts, as in a process
    that never saw the run before (it counts lineage ids anew, for one).
    """
    committed = Committed(restoring=restoring)
    send = driver.send

    def logged(event: Event) -> list[Command]:
        committed.events.append(event)
        commands = send(event)
        commit(driver.state, committed)
        if restoring:
            driver.state = stored(driver, committed.versions[-1])
        return commands

    vars(driver)["send"] = logged  # shadows the method on this one driver
    return committed


def commit(state: RunState, committed: Committed) -> None:
    """Commit the state's delta into the recorded parts and keep the version it makes."""
    delta = take_delta(state)
    head = json.loads(apply_parts(committed.parts, delta))
    changed = set(delta.put) | set(delta.drop)
    committed.versions.append(Version(head, dict(committed.parts), changed))


def replayed(driver: Driver, committed: Committed, count: int) -> RunState:
    """Return the in-memory state of the process that committed version `count`: one that
    applied every event before, or, where each step restored the run, only the last one."""
    state = RunState(run_id=driver.state.run_id, graphs=driver.graphs)
    first = 0
    if committed.restoring and count > 1:
        state, first = stored(driver, committed.versions[count - 2]), count - 1
    for event in committed.events[first:count]:
        state, _ = step(state, event, driver.pick)
        take_delta(state)  # committed: its marks are cleared as a store's commit clears them
    return state


def stored(driver: Driver, version: Version) -> RunState:
    """Return the state restored from every part of a version."""
    parts = ((key, json.loads(text)) for key, text in version.parts.items())
    return restore(assemble(version.head, parts), driver.graphs)


def changes(committed: Committed, since: int, now: int) -> dict[str, Any]:
    """Return the parts changed after version `since` up to `now`, as the store holds them."""
    keys = set().union(*(v.changed for v in committed.versions[since:now]))
    parts = committed.versions[now - 1].parts
    return {key: json.loads(parts[key]) if key in parts else GONE for key in keys}


def assert_same(caught: RunState, fresh: RunState) -> None:
    """Two states that must be indistinguishable to the scheduler and the store."""
    assert json.loads(json.dumps(caught.to_json())) == json.loads(json.dumps(fresh.to_json()))
    assert caught.persisted == fresh.persisted
    assert members(caught).layout() == Members(caught).layout() == Members(fresh).layout()
    for group in members(caught).frames.values():  # the frames themselves, not old copies
        assert all(frame is dict.get(caught.frames, i) for i, frame in group.items())
    assert caught.lineages.next_id == fresh.lineages.next_id
    assert caught.lineages.children == fresh.lineages.children
    for lineage_id in fresh.lineages.all:
        assert caught.lineages.view(lineage_id) == fresh.lineages.view(lineage_id)
    # Frames and scopes in id order, as a scan of them sees them (the store gives the
    # other parts in no set order, so nothing reads an order into them).
    assert list(caught.frames) == list(fresh.frames)
    assert list(caught.scopes) == list(fresh.scopes)
    for values in (caught.frames, caught.waits, caught.live, caught.scopes, caught.gathers):
        assert values.touched == set()


def check_catching_up(driver: Driver, committed: Committed, rng: random.Random) -> int:
    """Catch states up across pairs of versions; return how many pairs were checked."""
    count = len(committed.versions)
    pairs = {(since, now) for now in range(2, count + 1) for since in (now - 1, now - 2, 1)}
    pairs = {p for p in pairs if 1 <= p[0] < p[1]}
    for since, now in sorted(rng.sample(sorted(pairs), min(len(pairs), 12))):
        held = replayed(driver, committed, since)
        members(held)  # a process that stepped the run has its activation index built
        catch_up(held, committed.versions[now - 1].head, changes(committed, since, now))
        fresh = stored(driver, committed.versions[now - 1])
        assert_same(held, fresh)
        if now < count:  # both take the next step alike
            event = committed.events[now]
            held, theirs = step(held, event, driver.pick)
            fresh, ours = step(fresh, event, driver.pick)
            assert theirs == ours
            # The same writes: the store holds the same after either (a step may drop a key
            # it popped without finding, which the store ignores).
            assert stored_after(held, committed, now) == stored_after(fresh, committed, now)
    return len(pairs)


def stored_after(state: RunState, committed: Committed, now: int) -> tuple[Any, Any]:
    """Return the head and parts the store holds after committing the state's next delta."""
    parts = dict(committed.versions[now - 1].parts)
    delta = take_delta(state)
    head = json.loads(apply_parts(parts, delta))
    return head, {key: json.loads(text) for key, text in parts.items()}


def walk(driver: Driver, rng: random.Random, steps: int, restoring: bool = False) -> Committed:
    """Drive a run with random moves, committing each step (the driver's Start included)."""
    committed = record(driver, restoring)
    commit(driver.state, committed)
    if restoring:
        driver.state = stored(driver, committed.versions[-1])
    committed.events.append(Start(at=EPOCH.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), input=driver.input))
    for _ in range(steps):
        if driver.state.status.finished:
            break
        if rng.random() < 0.03 or not (driver.actions or driver.timers or driver.approvals):
            step_randomly(driver, rng)  # now and then any move, a cancel or a failure too
        else:
            move(driver, rng)
    return committed


def move(driver: Driver, rng: random.Random) -> None:
    """Complete an action, fire a timer or decide an approval, at random."""
    held = [*(("action", k) for k in sorted(driver.actions)),
            *(("timer", k) for k in sorted(driver.timers)),
            *(("approval", k) for k in sorted(driver.approvals))]  # fmt: skip
    kind, key = rng.choice(held)
    if kind == "action":
        driver.complete(key)
    elif kind == "timer":
        driver.fire(key)
    else:
        request = driver.approvals[key]
        decision = "approve" if rng.random() < 0.8 else "reject"
        driver.decide(request.node, "u", tuple(request.groups), decision, request.execution_id)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(DEMOS), st.integers(0, 2**32 - 1), st.integers(3, 40), st.booleans())
def test_a_demo_run_caught_up_is_the_stored_run(
    case: tuple[str, dict[str, Any]], seed: int, steps: int, restoring: bool
) -> None:
    rng = random.Random(seed)
    driver = driver_for(*case)
    committed = walk(driver, rng, steps, restoring)
    check_catching_up(driver, committed, rng)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated_flows(), st.integers(0, 2**32 - 1), st.integers(3, 40), st.booleans())
def test_a_generated_run_caught_up_is_the_stored_run(
    document: dict[str, Any], seed: int, steps: int, restoring: bool
) -> None:
    rng = random.Random(seed)
    driver = Driver(document, {"items": [1, 2, 3, 4, 5, 6]})
    committed = walk(driver, rng, steps, restoring)
    check_catching_up(driver, committed, rng)


def test_a_foreach_of_approvals_caught_up_after_many_decisions_elsewhere() -> None:
    lines = [{"id": f"L{i}", "amount": 20000 + i} for i in range(12)]
    driver = driver_for("batch-line-approval", {"lines": lines})
    committed = walk(driver, random.Random(0), 0)
    driver.settle()
    while driver.approvals:
        request = driver.approvals[sorted(driver.approvals)[0]]
        driver.decide(request.node, "u", tuple(request.groups), "approve", request.execution_id)
        driver.settle()
    assert driver.status == "completed"
    count = len(committed.versions)
    assert count > 12
    for since, now in [(1, count), (2, count - 3), (count // 2, count), (count - 1, count)]:
        held = replayed(driver, committed, since)
        members(held)
        changed = changes(committed, since, now)
        catch_up(held, committed.versions[now - 1].head, changed)
        assert_same(held, stored(driver, committed.versions[now - 1]))
    # One decision elsewhere changes a handful of parts, however many items the run holds.
    assert len(changes(committed, count // 2, count // 2 + 1)) < 12


def test_only_a_state_whose_parts_are_stored_catches_up() -> None:
    driver = driver_for(*DEMOS[0])
    fresh = RunState(run_id="run", graphs=driver.graphs)
    with pytest.raises(AssertionError, match="parts are stored"):
        catch_up(fresh, {}, {})


def test_writes_of_a_lineage_id_used_again_are_the_stored_ones() -> None:
    writes: list[tuple[str, JSON]] = [("log", [1]), ("log", [2]), ("log", [3])]
    assert patched_writes(writes, {3: ["log", [4]]}) == [*writes, ("log", [4])]
    # Released, and the id given to a new lineage by a process that restored the run.
    assert patched_writes(writes, {0: ["total", 5], 1: GONE, 2: GONE}) == [("total", 5)]
