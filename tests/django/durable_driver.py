"""Drive durable runs in the test process: the tasks' own code, called directly."""

import collections
import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.utils import timezone

from engine import tasks
from engine.core.runtime import ManualClock
from engine.core.state import RunState
from engine.models import Dispatch, PendingEvent, Run, Timer
from engine.runtime import clock, records, step
from engine.runtime.store import DjangoStore


def drain(run: Run, repeat_deliveries: int = 1, max_rounds: int = 500) -> Run:
    """Advance, run dispatched actions and fire timers until the run needs a person or ends.

    With repeat_deliveries=2 every message is delivered twice, as a broker may.
    """
    for _ in range(max_rounds):
        progressed = False
        for _ in range(repeat_deliveries):
            progressed |= step.advance(str(run.pk)) > 0
        for dispatch in Dispatch.objects.filter(run=run, completed_at=None).order_by("id"):
            for _ in range(repeat_deliveries):
                tasks.run_actions([dispatch.pk])
            progressed = True
        idle = not progressed and not PendingEvent.objects.filter(run=run, applied_at=None).exists()
        if idle and not fire_next_timer(run, repeat_deliveries):
            break
    run.refresh_from_db()
    return run


def row_of(dispatch: Dispatch) -> records.DispatchRow:
    """Return an outbox row as a worker holds it (the runtime's plain tuple, not the model)."""
    return records.DispatchRow(dispatch.pk, dispatch.run_id, dispatch.key, dispatch.command)


@contextmanager
def stopped_clock() -> Iterator[ManualClock]:
    """Run the block on a clock stopped at the wall clock's now: the runtime's time moves
    only when the test sleeps on it (`clock.sleep(seconds)`), and timers come due at once."""
    with clock.use_clock(ManualClock(timezone.now())) as stopped:
        assert isinstance(stopped, ManualClock)
        yield stopped


def fire_next_timer(run: Run, repeat_deliveries: int) -> bool:
    """Make the earliest timer due now and fire it; return whether there was one."""
    run.refresh_from_db()
    if run.status != "running" and any(
        f.get("wait", {}).get("approval")
        for f in DjangoStore().load(str(run.pk)).snapshot.get("frames", [])
    ):
        return False
    timer = Timer.objects.filter(run=run).order_by("due_at").first()
    if timer is None:
        return False
    Timer.objects.filter(pk=timer.pk).update(due_at=clock.now())
    for _ in range(repeat_deliveries):
        tasks.fire_timer(str(run.pk), timer.key)
    return True


class Processes(collections.OrderedDict[str, tuple[int, RunState]]):
    """Stands in for `state_cache._STATES`: the cached states of several worker processes.

    Each step takes its run's state out of the cache of a process drawn at random and puts
    the state it committed back into that process's cache, as when the step's events land
    on that process. A process whose state is older catches up (or reads every part). After
    every commit the state kept is compared with the one stored.
    """

    def __init__(self, count: int, rng: random.Random | None = None) -> None:
        super().__init__()
        self.caches = [collections.OrderedDict[str, tuple[int, RunState]]() for _ in range(count)]
        self.rng = rng
        self.current = self.caches[0]
        self.turns = 0

    def pop(self, key: str, *default: Any) -> Any:
        """Take a run's state out of the next process's cache: drawn at random, or in turn."""
        if self.rng is None:
            self.current = self.caches[self.turns % len(self.caches)]
        else:
            self.current = self.rng.choice(self.caches)
        self.turns += 1
        return self.current.pop(key, *default)

    def __setitem__(self, key: str, value: tuple[int, RunState]) -> None:
        stored = DjangoStore().load(key).snapshot
        kept = json.loads(json.dumps(value[1].to_json()))
        assert {**kept, "stored": None} == {**json.loads(json.dumps(stored)), "stored": None}
        self.current[key] = value

    def move_to_end(self, key: str, last: bool = True) -> None:
        self.current.move_to_end(key, last)

    def __len__(self) -> int:
        return len(self.current)
