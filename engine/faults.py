"""Faults for resilience tests: crash points, and duplicated messages.

A crash point: the process kills itself there, once per point.

`BRAID_CRASH_AT=advance.before_commit,action.done` names the points and
`BRAID_CRASH_MARKERS=/some/dir` is where each point notes that it fired, so a restarted
or redelivered task does not crash again. With neither set (always, outside tests) a
crash point is one dictionary lookup. Deleting a point's marker arms it again (the
chaos driver, `python -m chaos`, does that on its schedule).

`BRAID_DUPLICATE_EVERY=N` sends every Nth message of this process twice, as a broker
may deliver it: each copy must find its work done (tests, and `make chaos`).
"""

import itertools
import os
import signal
from pathlib import Path

POINTS = frozenset(
    {"action.started", "action.done", "advance.before_commit", "advance.after_commit"}
)


def crash_point(name: str, note: str = "") -> None:
    """SIGKILL this process if the environment asks for a crash here and it has not yet.

    `note` (the run being stepped, say) is written into the marker first, for the report
    of whoever armed it."""
    wanted = os.environ.get("BRAID_CRASH_AT")
    if not wanted or name not in wanted.split(","):
        return
    marker = Path(os.environ["BRAID_CRASH_MARKERS"]) / name
    try:
        marker.touch(exist_ok=False)
    except FileExistsError:
        return
    if note:
        marker.write_text(note)
    os.kill(os.getpid(), signal.SIGKILL)


_messages = itertools.count(1)


def duplicate_now() -> bool:
    """Return whether the message being sent now should be sent a second time."""
    every = os.environ.get("BRAID_DUPLICATE_EVERY")
    return bool(every) and next(_messages) % int(every) == 0  # type: ignore[arg-type]
