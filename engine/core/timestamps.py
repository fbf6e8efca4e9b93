"""Times as the engine writes them: RFC 3339 UTC text, and moving such a time forward."""

from __future__ import annotations

import datetime as dt


def format_timestamp(moment: dt.datetime) -> str:
    """Return an RFC 3339 UTC string such as `2030-01-01T00:00:30Z`."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}".rstrip("0")
    return text + "Z"


def shift_time(at: str, seconds: float) -> str:
    """Return the RFC 3339 time `seconds` after `at`."""
    moment = dt.datetime.fromisoformat(at.replace("Z", "+00:00"))
    return format_timestamp(moment + dt.timedelta(seconds=seconds))
