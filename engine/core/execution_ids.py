"""Execution ids: the path from `root` to the orchestration that wrote a node (CONTRACT §3).

`root:1:review:4:split.legal:1` has three segments. A segment is added at a loop iteration
or foreach item (`<node>:<n>`), at a fork or race branch (`<node>.<branch>:1`) and at a
subflow call (`<node>:1`). Ids that can write the same node have the same segment names;
among them the one with the larger number at the first differing segment supersedes.
"""

from dataclasses import dataclass, field
from functools import lru_cache, total_ordering

SEPARATOR = ":"
ROOT = "root"
# Wide enough for any iteration count a run can reach; fixed width keeps text order = order.
NUMBER_WIDTH = 10
MAX_NUMBER = 10**NUMBER_WIDTH - 1


class ExecutionIdError(ValueError):
    """An execution id that does not parse, or two ids that cannot be ordered."""


@dataclass(frozen=True, slots=True)
class Segment:
    """One orchestration boundary: its name (`lines`, `split.legal`) and 1-based number."""

    name: str
    number: int

    def __post_init__(self) -> None:
        check_segment(self.name, self.number)


def check_segment(name: str, number: int) -> None:
    """Raise ExecutionIdError unless the name and number make a valid segment."""
    if not name or SEPARATOR in name:
        raise ExecutionIdError(f"a segment name must be non-empty without ':': {name!r}")
    if not 1 <= number <= MAX_NUMBER:
        raise ExecutionIdError(f"a segment number must be 1..{MAX_NUMBER}: {number}")


@total_ordering
@dataclass(frozen=True, slots=True)
class ExecutionId:
    """A path of segments from the root segment `root:n`."""

    segments: tuple[Segment, ...]
    # encode()'s text, made on first use: parsed ids are cached, and a gather of 10,000
    # branches orders its arrivals by it on every walk.
    _encoded: str = field(default="", init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not self.segments or self.segments[0].name != ROOT:
            raise ExecutionIdError("an execution id starts with the segment root:<n>")

    @classmethod
    def root(cls, number: int = 1) -> "ExecutionId":
        """Return the id of a run's root orchestration."""
        return cls((Segment(ROOT, number),))

    @classmethod
    def parse(cls, text: str) -> "ExecutionId":
        """Parse `root:1:review:4`; raise ExecutionIdError on anything else (cached)."""
        return parse_id(text)

    @classmethod
    def _parse_uncached(cls, text: str) -> "ExecutionId":
        """Parse without the cache."""
        parts = text.split(SEPARATOR)
        if len(parts) % 2:
            raise ExecutionIdError(f"an execution id is name:number pairs: {text!r}")
        segments = []
        for name, number in zip(parts[::2], parts[1::2], strict=True):
            if not number.isascii() or not number.isdigit():
                raise ExecutionIdError(f"not a segment number in {text!r}: {number!r}")
            segments.append(Segment(name, int(number)))
        return cls(tuple(segments))

    def __str__(self) -> str:
        return SEPARATOR.join(f"{s.name}{SEPARATOR}{s.number}" for s in self.segments)

    def child(self, name: str, number: int = 1) -> "ExecutionId":
        """Return the id one boundary below this one."""
        return ExecutionId((*self.segments, Segment(name, number)))

    def iteration(self, node: str, number: int) -> "ExecutionId":
        """Return the id of a loop iteration or foreach item (1-based)."""
        return self.child(node, number)

    def branch(self, node: str, branch: str) -> "ExecutionId":
        """Return the id of one branch of a fork or race."""
        return self.child(f"{node}.{branch}", 1)

    def subflow(self, node: str) -> "ExecutionId":
        """Return the id of a subflow call."""
        return self.child(node, 1)

    @property
    def shape(self) -> tuple[str, ...]:
        """Return the segment names: only ids of one shape can be ordered."""
        return tuple(segment.name for segment in self.segments)

    def comparable_with(self, other: "ExecutionId") -> bool:
        """Return whether both ids could write the same node (same segment names)."""
        return self.shape == other.shape

    def is_prefix_of(self, other: "ExecutionId") -> bool:
        """Return whether this id is an ancestor of (or equal to) the other."""
        return other.segments[: len(self.segments)] == self.segments

    def numbers(self, other: "ExecutionId") -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Return both ids' numbers, refusing ids that are not comparable."""
        if not self.comparable_with(other):
            raise ExecutionIdError(f"{self} and {other} have different segments")
        return tuple(s.number for s in self.segments), tuple(s.number for s in other.segments)

    def supersedes(self, other: "ExecutionId") -> bool:
        """Return whether this id is more recent than the other (strictly)."""
        mine, theirs = self.numbers(other)
        return mine > theirs

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, ExecutionId):
            return NotImplemented
        mine, theirs = self.numbers(other)
        return mine < theirs

    def encode(self) -> str:
        """Return text whose binary order equals the id order among comparable ids."""
        if not self._encoded:
            text = SEPARATOR.join(
                [f"{s.name}{SEPARATOR}{s.number:0{NUMBER_WIDTH}d}" for s in self.segments]
            )
            object.__setattr__(self, "_encoded", text)
        return self._encoded

    @classmethod
    def decode(cls, text: str) -> "ExecutionId":
        """Invert encode()."""
        return cls.parse(text)


def child_text(parent: str, name: str, number: int = 1) -> str:
    """Return the text of the id one boundary below the id `parent` (a valid id's text).

    Equal to `str(ExecutionId.parse(parent).child(name, number))`, without building the
    segments: a fork of 10,000 branches or a foreach of 10,000 items makes one per child.
    """
    check_segment(name, number)
    return f"{parent}{SEPARATOR}{name}{SEPARATOR}{number}"


def iteration_text(parent: str, node: str, number: int) -> str:
    """Return the text of a loop iteration's or foreach item's id (see ExecutionId.iteration)."""
    return child_text(parent, node, number)


def branch_text(parent: str, node: str, branch: str) -> str:
    """Return the text of a fork or race branch's id (see ExecutionId.branch)."""
    return child_text(parent, f"{node}.{branch}")


@lru_cache(maxsize=65536)
def encoded(text: str) -> str:
    """Return the comparable encoding of an id's text (cached: every row write compares).

    The id is parsed without the parse cache: only the text is kept, not 4 objects per id
    that every full garbage collection would walk again.
    """
    return ExecutionId._parse_uncached(text).encode()


@lru_cache(maxsize=65536)
def parse_id(text: str) -> ExecutionId:
    """Parse once per distinct text: the ids of one run repeat in every row and token.

    `ExecutionId.parse` calls it; a loop over 10,000 rows (the monitor's walk) calls it
    directly, a Python call less per id."""
    return ExecutionId._parse_uncached(text)


def common_prefix_text(ids: list[str]) -> str:
    """Return the text of `common_prefix` of ids given as text, without parsing them."""
    first = ids[0].split(SEPARATOR)
    length = len(first)
    for text in ids[1:]:
        parts = text.split(SEPARATOR)
        length = min(length, len(parts))
        index = 0
        while index < length and parts[index] == first[index]:
            index += 1
        length = index
    length -= length % 2  # whole segments only: a name alone is no segment
    if length == 0:
        raise ExecutionIdError("ids of different runs share no prefix")
    return SEPARATOR.join(first[:length])


def common_prefix(ids: list[ExecutionId]) -> ExecutionId:
    """Return the longest id that is a prefix of every given id (at least the root)."""
    shortest = min(len(i.segments) for i in ids)
    length = 0
    while length < shortest and all(i.segments[length] == ids[0].segments[length] for i in ids):
        length += 1
    if length == 0:
        raise ExecutionIdError("ids of different runs share no prefix")
    return ExecutionId(ids[0].segments[:length])
