"""The per-process caches of the runtime: runs' decoded graphs and the states this process
committed last, so that a step reads neither when nobody else moved the run."""

import collections
import logging
import threading
from collections.abc import Mapping
from typing import Any

from engine.core.graph import Graph
from engine.core.parts import catch_up, is_head, restore
from engine.core.state import RunState
from engine.models import Run
from engine.runtime.part_changes import CHANGES_KEPT
from engine.runtime.store import changed_parts, graphs_digest, stored_snapshot

logger = logging.getLogger(__name__)

_GRAPHS: collections.OrderedDict[str, Mapping[str, Graph]] = collections.OrderedDict()
_GRAPHS_LOCK = threading.Lock()
GRAPHS_CACHED = 256
_STATES: collections.OrderedDict[str, tuple[int, RunState]] = collections.OrderedDict()
STATES_CACHED = 64


def run_graphs(
    run_id: str, documents: Mapping[str, Any] | None = None, digest: str = ""
) -> Mapping[str, Graph]:
    """Return a run's decoded graphs, cached per process by run and by documents.

    Decoding a 1,000-node graph takes tens of milliseconds, which every step (and every
    monitor refresh) would pay. A caller holding the run passes its `graphs` documents, so
    a miss costs no query, or its `graphs_digest`, so that a run whose documents this
    process decoded for another run reads none (on a fork of 1,000, reading, decoding and
    hashing them cost each worker process 6 ms per run).
    """
    with _GRAPHS_LOCK:
        found = _GRAPHS.get(run_id) or (_GRAPHS.get(digest) if digest else None)
        if found is not None:
            keep_graphs(found, run_id, digest)
            return found
    if documents is None:
        documents = Run.objects.values_list("graphs", flat=True).get(pk=run_id)
    # Runs of one flow version share their documents (unless a `latest` subflow moved on
    # between them): decode each set of documents once per process, not once per run.
    # (The stored digest was taken before the documents went through jsonb; kept under
    # both, a run's graphs are found by either.)
    read = graphs_digest(documents)
    with _GRAPHS_LOCK:
        graphs = _GRAPHS.get(read)
    if graphs is None:
        graphs = {key: Graph.from_json(document) for key, document in documents.items()}
    with _GRAPHS_LOCK:
        keep_graphs(graphs, read, run_id, digest)
    return graphs


def keep_graphs(graphs: Mapping[str, Graph], *keys: str) -> None:
    """Cache a run's decoded graphs under these keys (the caller holds _GRAPHS_LOCK)."""
    for key in keys:
        if key:
            _GRAPHS[key] = graphs
            _GRAPHS.move_to_end(key)
    while len(_GRAPHS) > GRAPHS_CACHED:
        _GRAPHS.popitem(last=False)


def load_state(run: Run, cached: bool = True) -> RunState:
    """Return a run's state as its last commit left it (a fresh one before the first step).

    The state this process committed last is taken from the cache when the run row's
    `snapshot_version` says nobody committed since. When others committed since, it is
    caught up with the parts their steps changed (caught_up); otherwise (nothing cached, or
    a version in between recorded no changes) the head and every part are read. The cached
    state is taken out: a step changes it in place, and only the step's commit puts it back
    (remember_state), so a step that rolls back leaves no trace here.
    """
    run_id = str(run.pk)
    with _GRAPHS_LOCK:
        entry = _STATES.pop(run_id, None)
    if cached and entry is not None:
        if entry[0] == run.snapshot_version:
            return entry[1]
        if caught_up(run, *entry):
            return entry[1]
    deferred = run.get_deferred_fields()
    graphs = run_graphs(run_id, digest="" if "graphs_digest" in deferred else run.graphs_digest)
    if cached and "snapshot" not in deferred:
        snapshot = run.snapshot  # the head, read with the row
    else:
        snapshot = Run.objects.values_list("snapshot", flat=True).get(pk=run.pk)
    if not snapshot:
        return RunState(run_id=run_id, graphs=graphs)
    return restore(stored_snapshot(run_id, snapshot), graphs)


def take_state(run_id: str) -> tuple[int, RunState] | None:
    """Take the state this process committed last for the run out of the cache, with its
    version, without reading the run: for a step computed before its lock (step_ahead).
    Only that step's commit puts it back, as load_state's callers do."""
    with _GRAPHS_LOCK:
        return _STATES.pop(run_id, None)


def caught_up(run: Run, version: int, state: RunState) -> bool:
    """Bring a cached state of an older version up to the run's, from the parts changed
    since; return False (the state is then of no use) when only a full load will do.

    The caller holds the run's lock with its head (`run.snapshot`) read. On a foreach of
    1,000 open approvals that another worker decided one of, this reads the half-dozen
    parts the decision changed instead of all 4,006.
    """
    behind = run.snapshot_version - version
    if not 0 < behind <= CHANGES_KEPT or "snapshot" in run.get_deferred_fields():
        return False
    head = run.snapshot
    if not head or not is_head(head) or state.persisted.full:
        return False
    changed = changed_parts(str(run.pk), version, run.snapshot_version)
    if changed is None:
        return False
    try:
        catch_up(state, head, changed)
    except Exception:  # the full load is the truth: a step never runs on a doubtful state
        logger.exception("run %s: catching up from version %s failed; reading every part",
                         run.pk, version)  # fmt: skip
        return False
    return True


def remember_state(run_id: str, version: int, state: RunState) -> None:
    """Keep a committed state for the next step of the run in this process; not a
    finished run's, which hardly any event follows."""
    if state.status.finished:
        return
    with _GRAPHS_LOCK:
        _STATES[run_id] = (version, state)
        _STATES.move_to_end(run_id)
        while len(_STATES) > STATES_CACHED:
            _STATES.popitem(last=False)
