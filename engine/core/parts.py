"""Incremental persistence: a run's state as keyed parts, and what one step changed of them.

A run is stored as a small head (status, counters, the ready queue) and one part per frame,
lineage header, lineage write, scope, gather token, wait and live activation count, each
under a key such as `frame:12` or `write:7/3`. A step changes a handful of parts, so it
writes a handful: `take_delta` returns the parts put and dropped since the last delta,
found from what the step touched (tracked dicts, the lineages' and barriers' own marks),
never by scanning the run. `assemble` turns a head and its parts back into the snapshot
`RunState.to_json` gives, so every reader of a whole snapshot keeps working.

A foreach frame's `items`, `done` and `failed` are parts of their own: the items are
written once, done and failed item by item, so deciding item 900 of 1,000 does not write
the other 899.
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.core.events import RunStatus
from engine.core.gathers import GatherBarrier, Token
from engine.core.graph import Graph
from engine.core.lineages import Lineage
from engine.core.members import vars_members
from engine.core.state import Frame, RunState, Scope
from engine.core.tracked import Persisted, WriteTrackedDict
from engine.core.values import JSON

FORMAT = "braid.parts/1"
GONE: Any = object()  # what a tracked dict holds for a key removed since the last delta
SPLIT = ("items", "done", "failed")  # a foreach barrier's parts of their own
ENTRIES = ("done", "failed")  # append-only: item number -> lineage or error
SPLIT_PLACEHOLDERS = dict.fromkeys(SPLIT)
NOTHING_STORED: tuple[None, int] = (None, 0)


@dataclass(slots=True)  # not frozen: a frozen dataclass's init costs 3x, once per step
class SnapshotDelta:
    """What a commit writes of a run's state: its head, parts put and parts dropped.

    With `replace`, the parts are the whole state: every part stored before goes. Values
    may share objects with the live state; a store encodes them within `commit`.
    """

    head: dict[str, Any]
    put: dict[str, JSON]
    drop: list[str]
    replace: bool = False


def head_of(state: RunState) -> dict[str, Any]:
    """Return the head: everything of the state that is not a part."""
    return {
        "format": FORMAT, "run_id": state.run_id, "status": state.status.value,
        "ready": list(state.ready), "working": state.working, "next_frame": state.next_frame,
        "next_scope": state.next_scope, "now": state.now, "result": state.result,
        "error": state.error, "started": state.started, "steps": state.steps,
    }  # fmt: skip


def frame_part(frame: Frame) -> dict[str, Any]:
    """Return a frame's part: the frame without a foreach barrier's items, done and failed."""
    barrier = frame.barrier
    if barrier and barrier.get("kind") == "foreach":
        # Placeholders: assembling puts the parts back under the keys the barrier had.
        barrier = {**barrier, **SPLIT_PLACEHOLDERS}
        for name in SPLIT:
            if name not in frame.barrier:
                del barrier[name]
    return {
        "id": frame.id, "scope": frame.scope, "lineage": frame.lineage, "node": frame.node,
        "execution_id": frame.execution_id, "context": frame.context,
        "activation": frame.activation, "owner": frame.owner, "variables": frame.variables,
        "provenance": frame.provenance, "state": frame.state,  # a StrEnum: JSON writes its value
        "waiting_on": frame.waiting_on, "attempt": frame.attempt, "wait": frame.wait,
        "barrier": barrier,
    }  # fmt: skip


def take_delta(state: RunState) -> SnapshotDelta:
    """Return what changed since the last delta (everything, the first time); reset marks."""
    replace = state.persisted.full
    if replace:
        touch_everything(state)
    put: dict[str, JSON] = {}
    drop: list[str] = []
    frame_changes(state, put, drop)
    lineage_changes(state, put, drop)
    if state.gathers or state.gathers.touched:
        gather_changes(state, put, drop)
    for kind, values in (("wait", state.waits), ("live", state.live)):
        if not values.touched:
            continue
        for key in values.touched:
            value = dict.get(values, key, GONE)
            if value is GONE:
                drop.append(f"{kind}:{key}")
            else:
                put[f"{kind}:{key}"] = value
        values.touched.clear()
    if state.scopes.touched:
        for scope_id in state.scopes.touched:
            scope = dict.__getitem__(state.scopes, scope_id)
            put[f"scope:{scope_id}"] = scope.to_json()
            put[f"fields:{scope_id}"] = dict(state.lineages.fields[scope_id])
        state.scopes.touched.clear()
    return SnapshotDelta(head_of(state), put, [] if replace else drop, replace)


def touch_everything(state: RunState) -> None:
    """Mark every part as changed and forget what was stored.

    Only what exists is marked: a whole snapshot drops nothing, so the keys touched and
    gone since the last delta (a run without a snapshot per step has thousands) are cleared.
    """
    state.persisted = Persisted(full=False)
    for values in tracked(state):
        values.touched.clear()
        values.touched.update(values.keys())
    state.lineages.touched.clear()
    state.lineages.touched.update(state.lineages.all)
    for barrier in state.gathers.values():
        barrier.touched.clear()
        barrier.touched.update(
            (context, slot) for context, bucket in barrier.buckets.items() for slot in bucket
        )


def tracked(state: RunState) -> list[WriteTrackedDict[Any, Any]]:
    """Return the state's tracked dicts."""
    return [state.frames, state.waits, state.live, state.scopes, state.gathers]


def frame_changes(state: RunState, put: dict[str, JSON], drop: list[str]) -> None:
    """Put the frames looked up or changed, with their new foreach entries; drop the gone."""
    persisted = state.persisted
    split = persisted.split
    frames = state.frames
    for frame_id in frames.touched:
        frame = dict.get(frames, frame_id)
        if frame is None:
            if frame_id in split:
                drop_split(persisted, frame_id, drop)
            drop.append(f"frame:{frame_id}")
            continue
        put[f"frame:{frame_id}"] = frame_part(frame)
        barrier = frame.barrier
        if not barrier or barrier.get("kind") != "foreach":
            if frame_id in split:
                drop_split(persisted, frame_id, drop)
            continue
        split.add(frame_id)
        items = barrier.get("items")
        if items is not None and persisted.items.get(frame_id) is not items:
            put[f"items:{frame_id}"] = items
            persisted.items[frame_id] = items
        for name in ENTRIES:
            if name in barrier:
                entry_changes(persisted, frame_id, name, barrier[name], put, drop)
    frames.touched.clear()


def entry_changes(
    persisted: Persisted, frame_id: int, name: str, entries: dict[str, JSON],
    put: dict[str, JSON], drop: list[str],
) -> None:  # fmt: skip
    """Put a foreach's new done or failed entries (they only grow while the dict lives).

    The new entries are the last ones: they are read from the end, so a step costs the
    entries it added, not the thousands before them.
    """
    stored, count = persisted.entries.get((frame_id, name), NOTHING_STORED)
    if stored is entries and len(entries) == count:
        return  # nothing added (the `failed` entries, most steps)
    if stored is not entries or len(entries) < count:
        if stored is not None:
            drop.extend(f"{name}:{frame_id}/{k}" for k in itertools.islice(stored, count))
        count = 0
    added = len(entries) - count
    if added == 1:  # one item decided this step (the usual case)
        key = next(reversed(entries))
        put[f"{name}:{frame_id}/{key}"] = entries[key]
    elif added:
        newest = itertools.islice(reversed(entries.items()), added)
        for key, value in reversed(list(newest)):
            put[f"{name}:{frame_id}/{key}"] = value
    persisted.entries[(frame_id, name)] = (entries, len(entries))


def drop_split(persisted: Persisted, frame_id: int, drop: list[str]) -> None:
    """Drop a frame's stored foreach items and entries."""
    persisted.split.discard(frame_id)
    if persisted.items.pop(frame_id, None) is not None:
        drop.append(f"items:{frame_id}")
    for name in ENTRIES:
        stored, count = persisted.entries.pop((frame_id, name), NOTHING_STORED)
        if stored is not None:
            drop.extend(f"{name}:{frame_id}/{k}" for k in itertools.islice(stored, count))


def lineage_changes(state: RunState, put: dict[str, JSON], drop: list[str]) -> None:
    """Put the lineage headers changed and the writes appended since the last delta; drop
    the lineages released (engine.core.lineages) with their writes."""
    lineages = state.lineages
    stored = state.persisted.writes
    for lineage_id in lineages.touched:
        lineage = lineages.all.get(lineage_id)
        if lineage is None:
            if lineage_id in stored:
                drop.append(f"lineage:{lineage_id}")
                drop.extend(f"write:{lineage_id}/{i}" for i in range(stored.pop(lineage_id)))
            continue
        put[f"lineage:{lineage_id}"] = {
            "id": lineage.id, "scope": lineage.scope, "parent": lineage.parent,
            "depth": lineage.depth, "base": lineage.base, "abandoned": lineage.abandoned,
        }  # fmt: skip
    written = lineages.written - lineages.touched if lineages.written else ()
    for lineage_id in itertools.chain(lineages.touched, written):
        lineage = lineages.all.get(lineage_id)
        if lineage is None:
            continue
        writes = lineage.writes
        first = stored.get(lineage_id, 0)
        for index in range(first, len(writes)):
            name, value = writes[index]
            put[f"write:{lineage_id}/{index}"] = [name, value]
        stored[lineage_id] = len(writes)
    lineages.touched.clear()
    lineages.written.clear()


def gather_changes(state: RunState, put: dict[str, JSON], drop: list[str]) -> None:
    """Put new barriers' slots and the tokens parked; drop the tokens consumed or discarded."""
    for key in state.gathers.touched:
        barrier = dict.get(state.gathers, key)
        if barrier is None:
            continue
        put[f"gather:{key}"] = list(barrier.slots)
    state.gathers.touched.clear()
    for key, barrier in state.gathers.items():
        for context, slot in barrier.touched:
            part = f"token:{key}|{context}|{slot}"
            token = barrier.buckets.get(context, {}).get(slot)
            if token is None:
                drop.append(part)
            else:
                put[part] = {
                    "lineage": token.lineage, "execution_id": token.execution_id,
                    "context": token.context, "activation": token.activation,
                    "provenance": list(token.provenance),
                }  # fmt: skip
        barrier.touched.clear()


def assemble(head: Mapping[str, Any], parts: Iterable[tuple[str, JSON]]) -> dict[str, Any]:
    """Return the snapshot (RunState.to_json's form) of a head and its parts."""
    frames: dict[int, dict[str, Any]] = {}
    split: dict[tuple[str, int], Any] = {}
    lineages: dict[int, dict[str, Any]] = {}
    writes: dict[int, list[tuple[int, JSON]]] = {}
    gathers: dict[str, list[Any]] = {}
    by_kind: dict[str, dict[str, Any]] = {"scope": {}, "fields": {}, "wait": {}, "live": {}}
    for part, value in parts:
        kind, _, key = part.partition(":")
        if kind == "frame":
            frames[int(key)] = value  # type: ignore[assignment]
        elif kind == "items":
            split[("items", int(key))] = value
        elif kind in ENTRIES:
            owner, _, number = key.partition("/")
            split.setdefault((kind, int(owner)), {})[number] = value
        elif kind == "lineage":
            lineages[int(key)] = value  # type: ignore[assignment]
        elif kind == "write":
            writer, _, index = key.partition("/")
            writes.setdefault(int(writer), []).append((int(index), value))
        elif kind == "gather":
            gathers.setdefault(key, [value, {}])[0] = value
        elif kind == "token":
            gather, context, slot = key.split("|")
            gathers.setdefault(gather, [None, {}])[1].setdefault(context, {})[slot] = value
        else:
            by_kind[kind][key] = value
    for frame_id, frame in frames.items():
        barrier = frame["barrier"]
        if barrier.get("kind") == "foreach":
            if "items" in barrier:
                barrier["items"] = split.get(("items", frame_id), [])
            for name in ENTRIES:
                if name in barrier:
                    entries = split.get((name, frame_id), {})
                    barrier[name] = {k: entries[k] for k in sorted(entries, key=int)}
    for lineage_id, lineage in lineages.items():
        lineage["writes"] = [w for _, w in sorted(writes.get(lineage_id, []))]
    return {
        "stored": FORMAT,
        **{k: v for k, v in head.items() if k != "format"},
        "scopes": [by_kind["scope"][k] for k in sorted(by_kind["scope"], key=int)],
        "frames": [frames[k] for k in sorted(frames)],
        "lineages": [lineages[k] for k in sorted(lineages)],
        "fields": by_kind["fields"],
        "gathers": gathers,
        "waits": by_kind["wait"],
        "live": by_kind["live"],
    }


def is_head(snapshot: Mapping[str, Any]) -> bool:
    """Return whether a stored snapshot is a head whose parts are stored apart."""
    return snapshot.get("format") == FORMAT


def restore(snapshot: Mapping[str, Any], graphs: Mapping[str, Graph]) -> RunState:
    """Rebuild a run from a snapshot; one assembled from parts knows they are stored."""
    state = RunState.from_json(snapshot, graphs)
    if snapshot.get("stored") == FORMAT:
        mark_stored(state)
    return state


def mark_stored(state: RunState) -> None:
    """Record that the store holds exactly this state's parts: the next delta is the change."""
    persisted = Persisted(full=False)
    for frame in state.frames.values():
        mark_split(persisted, frame)
    persisted.writes = {i: len(lineage.writes) for i, lineage in state.lineages.all.items()}
    state.persisted = persisted
    for values in tracked(state):
        values.touched.clear()
    state.lineages.touched.clear()
    state.lineages.written.clear()
    for barrier in state.gathers.values():
        barrier.touched.clear()


def catch_up(state: RunState, head: Mapping[str, Any], changed: Mapping[str, JSON]) -> None:
    """Bring a state the store held at an older version up to the store's, in place.

    `changed` maps every key put or dropped since that version to the part stored now, or
    to GONE where none is; every other part is as the state holds it. Afterwards the state
    is what `restore` of the head and all the parts would give (the derived lineage views
    are dropped and recomputed on demand, as after `restore`), and the next delta is the
    next step's change. A step that catches up costs the parts that changed, not the run.

    The state must be one whose parts are stored (`persisted.full` false): a state this
    process committed, or one restored from parts.
    """
    assert not state.persisted.full, "only a state whose parts are stored can catch up"
    by_kind: dict[str, dict[str, JSON]] = {}
    for part, value in changed.items():
        kind, _, key = part.partition(":")
        by_kind.setdefault(kind, {})[key] = value
    state.status = RunStatus(head["status"])
    state.ready = collections.deque(head["ready"])
    state.working = head["working"]
    state.next_frame = head["next_frame"]
    state.next_scope = head["next_scope"]
    state.now = head["now"]
    state.result = head["result"]
    state.error = head["error"]
    state.started = head["started"]
    state.steps = head.get("steps", 0)
    catch_up_scopes(state, by_kind.get("scope", {}), by_kind.get("fields", {}))
    catch_up_lineages(state, by_kind.get("lineage", {}), by_kind.get("write", {}))
    catch_up_frames(state, by_kind)
    catch_up_gathers(state, by_kind.get("gather", {}), by_kind.get("token", {}))
    for kind, counts in (("wait", state.waits), ("live", state.live)):
        for key, value in by_kind.get(kind, {}).items():
            if value is GONE:
                dict.pop(counts, key, None)
            else:
                dict.__setitem__(counts, key, value)  # type: ignore[misc]
    for values in tracked(state):
        values.touched.clear()


def catch_up_scopes(state: RunState, scopes: dict[str, JSON], fields: dict[str, JSON]) -> None:
    """Patch the scopes and their fields' reducers."""
    for key, value in scopes.items():
        if value is GONE:
            dict.pop(state.scopes, int(key), None)
        else:
            dict.__setitem__(state.scopes, int(key), Scope(**value))  # type: ignore[arg-type]
    for key, value in fields.items():
        if value is GONE:
            state.lineages.fields.pop(int(key), None)
        else:
            state.lineages.fields[int(key)] = value  # type: ignore[assignment]


def catch_up_lineages(state: RunState, headers: dict[str, JSON], writes: dict[str, JSON]) -> None:
    """Patch lineage headers and writes; drop every cached view, as `restore` leaves none."""
    lineages = state.lineages
    stored = state.persisted.writes
    for key, value in headers.items():
        lineage_id = int(key)
        old = lineages.all.pop(lineage_id, None)
        if old is not None:
            lineage_left(lineages, old)
        if value is GONE:
            stored.pop(lineage_id, None)
            continue
        new = Lineage.from_json({**value, "writes": []})  # type: ignore[dict-item]
        new.writes = old.writes if old is not None else []
        lineages.all[lineage_id] = new
        if new.parent is not None:
            lineages.children[new.parent] = lineages.children.get(new.parent, 0) + 1
    by_lineage: dict[int, dict[int, JSON]] = {}
    for key, value in writes.items():
        writer, _, index = key.partition("/")
        by_lineage.setdefault(int(writer), {})[int(index)] = value
    for lineage_id, changes in by_lineage.items():
        lineage = lineages.all.get(lineage_id)
        if lineage is None:
            continue  # released: its writes went with it
        lineage.writes = patched_writes(lineage.writes, changes)
    for changed_id in itertools.chain(map(int, headers), by_lineage):
        kept = lineages.all.get(changed_id)
        if kept is not None:
            stored[changed_id] = len(kept.writes)
    lineages.next_id = max(lineages.all, default=0) + 1  # as `restore` counts it
    lineages.clear_views()
    lineages.touched.clear()
    lineages.written.clear()


def lineage_left(lineages: Any, lineage: Any) -> None:
    """Take a lineage that is no more out of its parent's count of children."""
    if lineage.parent is None:
        return
    left = lineages.children.get(lineage.parent, 0) - 1
    if left > 0:
        lineages.children[lineage.parent] = left
    else:
        lineages.children.pop(lineage.parent, None)


def patched_writes(
    writes: list[tuple[str, JSON]], changes: dict[int, JSON]
) -> list[tuple[str, JSON]]:
    """Return a lineage's writes with the changed indices put or dropped, in index order.

    Writes only grow, so the changes are nearly always new writes after the last one: they
    are appended. Otherwise (a lineage released and its id used again) the list is rebuilt
    as the store holds it.
    """
    first = len(writes)
    if GONE not in changes.values() and sorted(changes) == list(range(first, first + len(changes))):
        return writes + [write_of(changes[i]) for i in range(first, first + len(changes))]
    present: dict[int, tuple[str, JSON]] = dict(enumerate(writes))
    for index, value in changes.items():
        if value is GONE:
            present.pop(index, None)
        else:
            present[index] = write_of(value)
    return [present[i] for i in sorted(present)]


def write_of(value: JSON) -> tuple[str, JSON]:
    """Return a stored write as the lineage holds it."""
    assert isinstance(value, list)
    name, written = value
    return str(name), written


def catch_up_frames(state: RunState, by_kind: dict[str, dict[str, JSON]]) -> None:
    """Patch the frames, a foreach's items and entries, the activation index and the marks."""
    parts = by_kind.get("frame", {})
    items = by_kind.get("items", {})
    entries: dict[tuple[str, int], dict[str, JSON]] = {}
    for name in ENTRIES:
        for key, value in by_kind.get(name, {}).items():
            owner, _, number = key.partition("/")
            entries.setdefault((name, int(owner)), {})[number] = value
    affected = {int(k) for k in itertools.chain(parts, items)} | {o for _, o in entries}
    members = vars_members(state)
    frames = state.frames
    for frame_id in sorted(affected):
        old = dict.get(frames, frame_id)
        part = parts.get(str(frame_id), old)
        if part is GONE or part is None:
            if old is not None:
                dict.pop(frames, frame_id)
                if members is not None:
                    members.remove(old)
            forget_split(state.persisted, frame_id)
            continue
        new = old if part is old else Frame.from_json(part)  # type: ignore[arg-type]
        if new.barrier.get("kind") == "foreach":
            old_barrier = old.barrier if old is not None else {}
            if "items" in new.barrier:
                found = items.get(str(frame_id), old_barrier.get("items"))
                new.barrier["items"] = [] if found is GONE or found is None else found
            for name in ENTRIES:
                if name in new.barrier:
                    before = old_barrier.get(name)
                    new.barrier[name] = patched_entries(
                        before if isinstance(before, dict) else {}, entries.get((name, frame_id))
                    )
        if new is not old:
            dict.__setitem__(frames, frame_id, new)
            if members is not None:
                members.replace(state, old, new)
        forget_split(state.persisted, frame_id)
        mark_split(state.persisted, new)


def patched_entries(entries: dict[str, JSON], changes: dict[str, JSON] | None) -> dict[str, JSON]:
    """Return a foreach's done or failed entries with the changed ones put or dropped."""
    if not changes:
        return entries
    patched = dict(entries)
    for number in sorted(changes, key=int):
        value = changes[number]
        if value is GONE:
            patched.pop(number, None)
        else:
            patched[number] = value
    return patched


def forget_split(persisted: Persisted, frame_id: int) -> None:
    """Forget what the store held of a frame's foreach parts."""
    persisted.split.discard(frame_id)
    persisted.items.pop(frame_id, None)
    for name in ENTRIES:
        persisted.entries.pop((frame_id, name), None)


def mark_split(persisted: Persisted, frame: Frame) -> None:
    """Record that the store holds a foreach frame's items and entries as they are."""
    if frame.barrier.get("kind") != "foreach":
        return
    persisted.split.add(frame.id)
    if "items" in frame.barrier:
        persisted.items[frame.id] = frame.barrier["items"]
    for name in ENTRIES:
        if name in frame.barrier:
            entries = frame.barrier[name]
            persisted.entries[(frame.id, name)] = (entries, len(entries))


def catch_up_gathers(state: RunState, gathers: dict[str, JSON], tokens: dict[str, JSON]) -> None:
    """Patch the gather barriers' slots and their parked tokens."""
    for key, value in gathers.items():
        old = dict.get(state.gathers, key)
        if value is GONE:
            dict.pop(state.gathers, key, None)
            continue
        barrier = GatherBarrier(value)  # type: ignore[arg-type]
        if old is not None:
            barrier.buckets = old.buckets
        dict.__setitem__(state.gathers, key, barrier)
    for key, value in tokens.items():
        gather, context, slot = key.split("|")
        found = dict.get(state.gathers, gather)
        if found is None:
            continue  # gone with its gather
        barrier = found
        if value is GONE:
            bucket = barrier.buckets.get(context)
            if bucket is not None:
                bucket.pop(slot, None)
                if not bucket:
                    del barrier.buckets[context]
        else:
            bucket = barrier.buckets.setdefault(context, {})
            bucket[slot] = Token.from_json(value)  # type: ignore[arg-type]
    for barrier in state.gathers.values():
        barrier.touched.clear()
