"""The activation index of a run: the live frames of each activation, and what each frame owns.

Derived from `RunState.frames`, never persisted, and kept on the state object: the
scheduler walks it to cancel an activation, and `engine.core.parts` keeps it in step
when a run catches up with its store.
"""

from __future__ import annotations

from engine.core.state import Frame, RunState


class Members:
    """The live frames of each activation, and the activations each frame owns or calls.

    Derived from `RunState.frames` (never persisted): cancelling an activation walks down
    from it instead of testing every live frame of the run, so a foreach item's return
    costs what the item holds, whatever the number of items or live frames.
    """

    def __init__(self, state: RunState) -> None:
        self.frames: dict[str, dict[int, Frame]] = {}
        self.owned: dict[int, set[str]] = {}
        for frame in state.frames.values():
            self.add(state, frame)

    def add(self, state: RunState, frame: Frame) -> None:
        """Count a live frame in its activation, and that activation under its parent frame."""
        # get-then-set, not setdefault: setdefault builds an empty dict or set every call,
        # and a fork or foreach adds a frame per branch or item.
        activation = frame.activation
        group = self.frames.get(activation)
        if group is None:
            group = self.frames[activation] = {}
        group[frame.id] = frame
        parent = parent_frame(state, activation)
        if parent is not None:
            owned = self.owned.get(parent)
            if owned is None:
                owned = self.owned[parent] = set()
            owned.add(activation)

    def remove(self, frame: Frame) -> None:
        """Forget a frame that left the run (retired or cancelled)."""
        group = self.frames.get(frame.activation)
        if group is not None:
            group.pop(frame.id, None)
            if not group:
                del self.frames[frame.activation]
        self.owned.pop(frame.id, None)

    def replace(self, state: RunState, old: Frame | None, new: Frame) -> None:
        """Put a frame object in place of an older one of the same id (a run caught up)."""
        if old is None:
            self.add(state, new)
            return
        group = self.frames.get(old.activation)
        if old.activation == new.activation and group is not None:
            group[new.id] = new
            return
        owned = self.owned.get(old.id)  # its nested activations stay its own
        self.remove(old)
        if owned is not None:
            self.owned[old.id] = owned
        self.add(state, new)

    def layout(self) -> tuple[dict[str, list[int]], dict[int, list[str]]]:
        """Return the frame ids per activation and the live activations under each frame."""
        frames = {name: sorted(group) for name, group in sorted(self.frames.items())}
        owned = {
            frame: sorted(name for name in names if name in self.frames)
            for frame, names in sorted(self.owned.items())
        }
        return frames, {frame: names for frame, names in owned.items() if names}

    def below(self, activation: str) -> tuple[set[str], list[Frame]]:
        """Return the activation with every one nested in it, and their frames by id."""
        doomed = {activation}
        pending = [activation]
        found: list[Frame] = []
        while pending:
            for frame in self.frames.get(pending.pop(), {}).values():
                found.append(frame)
                for nested in self.owned.get(frame.id, ()):
                    if nested not in doomed:
                        doomed.add(nested)
                        pending.append(nested)
        if len(found) > 1:
            found.sort(key=lambda frame: frame.id)
        return doomed, found


def parent_frame(state: RunState, activation: str) -> int | None:
    """Return the id of the frame an activation hangs from: its owner, or its scope's caller."""
    if activation.startswith("s"):
        return state.scopes[int(activation[1:])].caller
    return int(activation[1:].split(":", 1)[0])


def vars_members(state: RunState) -> Members | None:
    """Return the activation index kept on a state, if one was built."""
    cached: Members | None = vars(state).get("_members")
    return cached


def members(state: RunState) -> Members:
    """Return the activation index of a run, built once per state object and kept on it."""
    cached: Members | None = vars(state).get("_members")
    if cached is None:
        cached = Members(state)
        vars(state)["_members"] = cached
    return cached
