"""Gather barriers: arrivals bucketed by activation context, one token per named slot.

Like langgraph's NamedBarrierValue, a barrier knows only its slot names. It never asks
which fork produced an arrival: a token for slot `d` may itself be a merged continuation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple


class Token(NamedTuple):
    """An arrival at a gather: its lineage, its execution, its activation and provenance.

    `context` is the enclosing loop iteration, foreach item or subflow call; `activation`
    identifies the frame group that failure and cancellation act on; `provenance` lists
    the branch executions merged into this token so far. A tuple, not a frozen dataclass:
    a fork of 10,000 parks 10,000, and a frozen dataclass costs three times as much to make.
    """

    lineage: int
    execution_id: str
    context: str
    activation: str
    provenance: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """Return the token as JSON."""
        return {"lineage": self.lineage, "execution_id": self.execution_id,
                "context": self.context, "activation": self.activation,
                "provenance": self.provenance}  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Token:
        """Rebuild a token from to_json()."""
        return cls(**{**data, "provenance": tuple(data["provenance"])})


class DuplicateSlot(Exception):
    """A second token for a slot that is already filled in this bucket."""


class GatherBarrier:
    """The buckets of one gather node, keyed by activation context."""

    def __init__(self, slots: Sequence[str]) -> None:
        self.slots = tuple(slots)
        self.buckets: dict[str, dict[str, Token]] = {}
        self.touched: set[tuple[str, str]] = set()  # (context, slot) changed since stored

    def update(self, slot: str, token: Token) -> None:
        """Put a token in its context's bucket; raise DuplicateSlot if the slot is taken."""
        bucket = self.buckets.get(token.context)
        if bucket is None:
            bucket = self.buckets[token.context] = {}
        if slot in bucket:
            raise DuplicateSlot(f"slot {slot!r} already has a token in {token.context}")
        bucket[slot] = token
        self.touched.add((token.context, slot))

    def is_ready(self, context: str) -> bool:
        """Return whether every slot of the context's bucket is filled."""
        bucket = self.buckets.get(context)
        return (0 if bucket is None else len(bucket)) == len(self.slots)

    def filled(self, context: str) -> list[str]:
        """Return the filled slots of a bucket, in declared order."""
        bucket = self.buckets.get(context, {})
        return [slot for slot in self.slots if slot in bucket]

    def consume(self, context: str) -> list[Token]:
        """Remove a full bucket and return its tokens in declared-slot order."""
        bucket = self.buckets.pop(context)
        self.touched.update((context, slot) for slot in bucket)
        return [bucket[slot] for slot in self.slots]

    def discard(self, doomed: Iterable[str]) -> list[Token]:
        """Remove every token whose activation is doomed; return them."""
        doomed = set(doomed)
        removed = []
        for context, bucket in list(self.buckets.items()):
            for slot, token in list(bucket.items()):
                if token.activation in doomed:
                    removed.append(bucket.pop(slot))
                    self.touched.add((context, slot))
            if not bucket:
                del self.buckets[context]
        return removed

    def pending(self) -> Iterable[Token]:
        """Return every parked token."""
        return (token for bucket in self.buckets.values() for token in bucket.values())

    def snapshot(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Return the buckets as JSON."""
        return {
            context: {slot: token.to_json() for slot, token in bucket.items()}
            for context, bucket in self.buckets.items()
        }

    def restore(self, data: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> None:
        """Load buckets from snapshot()."""
        self.buckets = {
            context: {slot: Token.from_json(token) for slot, token in bucket.items()}
            for context, bucket in data.items()
        }
