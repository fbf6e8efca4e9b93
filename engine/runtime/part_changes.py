"""Which parts each step of a run changed, kept for a while: a worker whose cached state
is a few versions old catches up from them instead of reading every part."""

import json

from engine.core.events import RunStatus
from engine.core.parts import SnapshotDelta
from engine.core.values import dumps
from engine.models import PartChange

# How many versions of a run's part changes are kept: a worker whose cached state is older
# than that reads every part. Pruned every CHANGES_PRUNED versions, and wholly at the end.
CHANGES_KEPT = 64
CHANGES_PRUNED = 16


def changes_kept(version: int | None, status: RunStatus) -> tuple[int | None, int]:
    """Return the version to record a step's part changes under (None: record none) and
    the version up to which the run's older change rows are deleted (-1: none)."""
    if version is None:
        return None, -1
    if status.finished:  # no step follows that could catch up: keep nothing
        return None, version
    if version % CHANGES_PRUNED == 0:
        return version, version - CHANGES_KEPT
    return version, -1


def record_changes(run_id: str, delta: SnapshotDelta, status: RunStatus, version: int) -> None:
    """Record a step's part changes (and prune old ones) with the ORM, as commit_sql does."""
    logged, horizon = changes_kept(version, status)
    if horizon >= 0:
        PartChange.objects.filter(run_id=run_id, version__lte=horizon).delete()
    if logged is not None:
        keys = [*delta.put, *(key for key in delta.drop if key not in delta.put)]
        PartChange.objects.create(run_id=run_id, version=logged, keys=dumps(keys))


def logged_keys(texts: list[str]) -> set[str]:
    """Return the part keys named by change rows' `keys` texts."""
    return {key for text in texts for key in json.loads(text)}
