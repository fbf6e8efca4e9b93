"""The durable runtime's clock: where every step, timer and sweep reads the time.

The wall clock unless a test or a tool sets another (`use_clock`), as `engine.core.runtime`
takes a Clock. Worker leases keep the wall clock: they measure whether processes are alive.
"""

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager

from engine.core.runtime import Clock, RealClock
from engine.core.timestamps import format_timestamp

_clock: Clock = RealClock()


def now() -> dt.datetime:
    """Return the runtime's current time (aware, UTC)."""
    return _clock.now()


def now_text() -> str:
    """Return the runtime's current time as RFC 3339."""
    return format_timestamp(_clock.now())


def set_clock(clock: Clock) -> Clock:
    """Make `clock` the runtime's clock for this process; return the one it replaces."""
    global _clock
    before, _clock = _clock, clock
    return before


@contextmanager
def use_clock(clock: Clock) -> Iterator[Clock]:
    """Run the block on `clock`, then put the previous clock back."""
    before = set_clock(clock)
    try:
        yield clock
    finally:
        set_clock(before)
