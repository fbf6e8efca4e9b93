"""The runtime state of one run: scopes, frames, lineages, gathers and the ready queue.

Everything here serializes to JSON and back (`RunState.to_json` / `RunState.from_json`);
graphs are not part of the snapshot: the adapter that loads a run supplies them by key.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from engine.core.events import RunStatus
from engine.core.execution_ids import ExecutionId
from engine.core.gathers import GatherBarrier
from engine.core.graph import Graph, Node, SubflowNode
from engine.core.lineages import Lineages
from engine.core.tracked import Persisted, TrackedDict, WriteTrackedDict
from engine.core.values import JSON

MAIN = "main"


def subflow_key(node: SubflowNode) -> str:
    """Return the graph key of a subflow call: `slug@version` or `slug@latest`."""
    return f"{node.flow}@{node.version if node.version is not None else 'latest'}"


class FrameState(StrEnum):
    """What a live frame is doing."""

    READY = "ready"  # in the ready queue
    WORKING = "working"  # an action runs for it
    SUSPENDED = "suspended"  # waits for a person or a timer
    BLOCKED = "blocked"  # waits for its children (foreach, loop, race, subflow)


@dataclass(slots=True)
class Frame:
    """A schedulable graph cursor executing against one lineage.

    `owner` is the frame whose barrier this frame belongs to (scheduling ownership only);
    `activation` names the group of frames that fail and cancel together: one fork
    activation inside one foreach item, loop iteration, race branch or scope.
    """

    id: int
    scope: int
    lineage: int
    node: str
    execution_id: str
    context: str
    activation: str
    owner: int | None
    variables: dict[str, JSON] = field(default_factory=dict)
    provenance: list[str] = field(default_factory=list)
    state: FrameState = FrameState.READY
    waiting_on: str | None = None
    attempt: int = 1
    wait: dict[str, Any] = field(default_factory=dict)
    barrier: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Return the frame as JSON."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Frame:
        """Rebuild a frame from to_json()."""
        return cls(**{**data, "state": FrameState(data["state"])})


@dataclass(slots=True)
class Scope:
    """One workflow invocation: the run, or one subflow call."""

    id: int
    graph: str
    prefix: str
    input: JSON
    caller: int | None
    root_lineage: int
    activation: str

    def to_json(self) -> dict[str, Any]:
        """Return the scope as JSON."""
        return asdict(self)


@dataclass
class RunState:
    """The whole runtime state of one run."""

    run_id: str
    graphs: Mapping[str, Graph]
    status: RunStatus = RunStatus.RUNNING
    # Tracked: each remembers the keys a step touched, so a commit writes only those.
    scopes: WriteTrackedDict[int, Scope] = field(default_factory=WriteTrackedDict)
    frames: TrackedDict[int, Frame] = field(default_factory=TrackedDict)
    lineages: Lineages = field(default_factory=Lineages)
    gathers: WriteTrackedDict[str, GatherBarrier] = field(default_factory=WriteTrackedDict)
    ready: deque[int] = field(default_factory=deque)
    waits: WriteTrackedDict[str, int] = field(default_factory=WriteTrackedDict)
    live: WriteTrackedDict[str, int] = field(default_factory=WriteTrackedDict)
    working: int = 0  # frames whose action runs now
    next_frame: int = 1
    next_scope: int = 1
    now: str = ""
    result: dict[str, JSON] | None = None
    error: str | None = None
    started: bool = False
    steps: int = 0  # nodes executed, every scope included (BRAID_RUN_MAX_STEPS)
    persisted: Persisted = field(default_factory=Persisted, repr=False, compare=False)

    def graph_of(self, frame: Frame) -> Graph:
        """Return the graph the frame runs in."""
        return self.graphs[self.scopes[frame.scope].graph]

    def execution_id(self, frame: Frame) -> ExecutionId:
        """Return the frame's execution id as a value."""
        return ExecutionId.parse(frame.execution_id)

    def node_of(self, frame: Frame) -> Node:
        """Return the node the frame stands on."""
        return self.graph_of(frame).node(frame.node)

    def path(self, frame: Frame, node: str | None = None) -> str:
        """Return the node path of a frame's node: `<subflow node>/<child node>` in subflows."""
        return self.scopes[frame.scope].prefix + (node or frame.node)

    def gather(self, scope: int, graph: Graph, node: str, slots: tuple[str, ...]) -> GatherBarrier:
        """Return the barrier of a gather node in a scope, creating it on first use."""
        key = f"{scope}/{node}"
        barrier = self.gathers.get(key)
        if barrier is None:
            barrier = self.gathers[key] = GatherBarrier(slots)
        return barrier

    def current_view(self) -> dict[str, JSON]:
        """Return the run's state as it stands: the final state, or the main line's view.

        While the run is live, that is the view at the lowest common ancestor of the
        lineages the run's own activation works in (writes of unmerged branches and items
        are not part of it yet).
        """
        if self.result is not None:
            return dict(self.result)
        if not self.scopes:
            return {}
        lineages = [f.lineage for f in self.frames.values() if f.activation == "s1"]
        if not lineages:
            lineages = [self.scopes[1].root_lineage]
        return dict(self.lineages.view(self.lineages.common_ancestor(lineages)))

    def timers(self) -> list[tuple[str, str]]:
        """Return every pending timer as (due, key), earliest first."""
        found = []
        for frame in self.frames.values():
            key, due = frame.wait.get("timer"), frame.wait.get("due")
            if key and due and key in self.waits:
                found.append((due, key))
        return sorted(found)

    def approvals(self) -> list[tuple[str, Frame]]:
        """Return every open approval as (key, frame), in frame order."""
        return [(f.wait["approval"], f) for f in self.frames.values() if f.wait.get("approval")]

    def to_json(self) -> dict[str, Any]:
        """Return the snapshot: every frame, lineage, parked token and the ready queue."""
        return {
            "run_id": self.run_id,
            "status": self.status.value,
            "scopes": [scope.to_json() for scope in self.scopes.values()],
            "frames": [frame.to_json() for frame in self.frames.values()],
            "lineages": self.lineages.to_json(),
            "fields": {str(k): dict(v) for k, v in self.lineages.fields.items()},
            "gathers": {key: [list(g.slots), g.snapshot()] for key, g in self.gathers.items()},
            "ready": list(self.ready),
            "waits": dict(self.waits),
            "live": dict(self.live),
            "working": self.working,
            "next_frame": self.next_frame,
            "next_scope": self.next_scope,
            "now": self.now,
            "result": self.result,
            "error": self.error,
            "started": self.started,
            "steps": self.steps,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], graphs: Mapping[str, Graph]) -> RunState:
        """Rebuild a run from to_json(), with the graphs it refers to."""
        lineages = Lineages({int(k): v for k, v in data["fields"].items()})
        lineages.restore(data["lineages"])
        gathers = {}
        for key, (slots, buckets) in data["gathers"].items():
            barrier = GatherBarrier(slots)
            barrier.restore(buckets)
            gathers[key] = barrier
        return cls(
            run_id=data["run_id"],
            graphs=graphs,
            status=RunStatus(data["status"]),
            scopes=WriteTrackedDict({s["id"]: Scope(**s) for s in data["scopes"]}),
            frames=TrackedDict({f["id"]: Frame.from_json(f) for f in data["frames"]}),
            lineages=lineages,
            gathers=WriteTrackedDict(gathers),
            ready=deque(data["ready"]),
            waits=WriteTrackedDict(data["waits"]),
            live=WriteTrackedDict(data["live"]),
            working=data["working"],
            next_frame=data["next_frame"],
            next_scope=data["next_scope"],
            now=data["now"],
            result=data["result"],
            error=data["error"],
            started=data["started"],
            steps=data.get("steps", 0),  # snapshots from before the budget have none
        )
