"""Join warnings: which decisions a gather's tokens must have taken, and how many can pass."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping
from itertools import pairwise
from typing import Final

from engine.core.graph import (
    Edge,
    GatherNode,
    NodeType,
)
from engine.core.validation.flow import BodyScope, Flow, is_body_entry
from engine.core.validation.problems import Link, Problem, ProblemCode, make_problem

# ---------------------------------------------------------------------------------------------
# Join warnings: which decisions must have been taken, and how many tokens can pass


_NOT_DECISIONS: Final = frozenset({NodeType.FOREACH, NodeType.LOOP})
_CAP: Final = 2  # token counts are only told apart as 0, 1 and "two or more"
_EXACT_PAIR_BUDGET: Final = 64


class JoinAnalysis:
    """Dominators over the nodes and edges of the flow's DAG, and token counts, for the warnings.

    Elements are node ids and edges: an edge is an element between its source and its target,
    so "this outcome of that decision was taken" is an ancestor in the dominator tree.
    """

    def __init__(self, flow: Flow, scopes: Mapping[str, BodyScope], back_edges: set[int]) -> None:
        self.flow = flow
        self.back_edges = back_edges
        self.node_ids = list(scopes)
        self.node_index = {node_id: i for i, node_id in enumerate(self.node_ids)}
        self.links = [
            link
            for link in flow.known
            if link.index not in back_edges
            and link.edge.source in scopes
            and link.edge.target in scopes
        ]
        self.first_link = len(self.node_ids)
        size = self.first_link + len(self.links) + 1
        self.root = size - 1
        self.parent = [self.root] * size
        self.depth = [0] * size
        self.count = [0] * size
        self.preorder = [0] * size
        self.incoming: list[list[int]] = [[] for _ in range(size)]
        for position, link in enumerate(self.links):
            self.incoming[self.node_index[link.edge.target]].append(self.first_link + position)
        self.order = self._topological()
        # Kahn's order misses a reached node exactly when the forward edges have a cycle.
        self.acyclic = sum(1 for e in self.order if e < self.first_link) == len(self.node_ids)

    def link_of(self, element: int) -> Link:
        """Return the link of an edge element."""
        return self.links[element - self.first_link]

    def is_edge(self, element: int) -> bool:
        """Return whether an element is an edge (not a node, not the root)."""
        return self.first_link <= element < self.root

    def warnings(self) -> list[Problem]:
        """Return the three join warnings."""
        for element in self.order:
            self._dominate(element)
        self._number_preorder()
        for element in self.order:
            self.count[element] = self._tokens(element)
        problems = []
        processed = set(self.order)
        for node_id, element in self.node_index.items():
            gather = self.flow.nodes.get(node_id)
            if isinstance(gather, GatherNode) and element in processed:
                problems += self._gather_warnings(gather, self.incoming[element])
        return problems + self._dangling_branch_warnings()

    def _topological(self) -> list[int]:
        """Return the elements reachable from start in topological order (Kahn's algorithm)."""
        successors: list[list[int]] = [[] for _ in self.parent]
        pending = [len(inputs) for inputs in self.incoming]
        for position, link in enumerate(self.links):
            element = self.first_link + position
            successors[self.node_index[link.edge.source]].append(element)
            successors[element].append(self.node_index[link.edge.target])
            pending[element] = 1
        starts = [self.node_index[start] for start in self.flow.starts if start in self.node_index]
        ready = deque(start for start in starts if pending[start] == 0)
        order = []
        while ready:
            element = ready.popleft()
            order.append(element)
            for successor in successors[element]:
                pending[successor] -= 1
                if pending[successor] == 0:
                    ready.append(successor)
        return order

    def _dominate(self, element: int) -> None:
        """Set an element's immediate dominator: an edge's source, else the meet of the inputs."""
        inputs = self.incoming[element]
        if self.is_edge(element):
            parent = self.node_index[self.link_of(element).edge.source]
        elif inputs:
            parent = self._meet_all(inputs)
        else:
            parent = self.root
        self.parent[element] = parent
        self.depth[element] = self.depth[parent] + 1

    def _meet_all(self, elements: list[int]) -> int:
        """Return the nearest common dominator of several elements."""
        meet = elements[0]
        for element in elements[1:]:
            meet = self._split(meet, element)[0]
        return meet

    def _split(self, first: int, second: int) -> tuple[int, int | None, int | None]:
        """Return the nearest common dominator of two elements and its children toward each."""
        depth, parent = self.depth, self.parent
        below_first = below_second = None
        while depth[first] > depth[second]:
            below_first, first = first, parent[first]
        while depth[second] > depth[first]:
            below_second, second = second, parent[second]
        while first != second:
            below_first, first = first, parent[first]
            below_second, second = second, parent[second]
        return first, below_first, below_second

    def _number_preorder(self) -> None:
        """Number the dominator tree in preorder, so each subtree is a contiguous range."""
        children: list[list[int]] = [[] for _ in self.parent]
        for element in self.order:
            children[self.parent[element]].append(element)
        stack, number = [self.root], 0
        while stack:
            element = stack.pop()
            self.preorder[element] = number
            number += 1
            stack.extend(reversed(children[element]))

    def _tokens(self, element: int) -> int:
        """Return how many tokens can pass an element in one activation (1, or 2 for "several")."""
        if self.is_edge(element):
            # Each foreach item and loop iteration is an activation of its own.
            link = self.link_of(element)
            if is_body_entry(self.flow.types[link.edge.source], link.edge):
                return 1
            return self.count[self.parent[element]]
        inputs = self.incoming[element]
        if len(inputs) <= 1:
            return self.count[inputs[0]] if inputs else 1
        if self.flow.types[self.node_ids[element]] is NodeType.GATHER:
            return 1  # a gather fires at most once per activation
        if all(self.count[i] == 1 for i in inputs) and self._first_overlap(inputs) is None:
            return 1
        return _CAP

    def _exclusive(self, first: int, second: int) -> bool:
        """Return whether one activation's tokens can never reach both elements."""
        meet, toward_first, toward_second = self._split(first, second)
        if toward_first is None or toward_second is None or meet >= self.first_link:
            return False
        if self.count[meet] != 1 or self.flow.types[self.node_ids[meet]] in _NOT_DECISIONS:
            return False
        first_edge, second_edge = (
            self._outcome_edge(toward_first),
            self._outcome_edge(toward_second),
        )
        if first_edge is None or second_edge is None:
            return False
        return first_edge.follows != second_edge.follows

    def _outcome_edge(self, element: int) -> Edge | None:
        """Return an element's edge if it is an ordinary outcome edge (not a branch edge)."""
        if not self.is_edge(element):
            return None
        edge = self.link_of(element).edge
        return edge if edge.branch is None else None

    def _first_overlap(self, inputs: list[int]) -> tuple[int, int] | None:
        """Return two inputs that are not mutually exclusive, or None when every pair is.

        In dominator preorder, the meet of any two inputs is the meet of some adjacent pair, and
        every child subtree of a meet borders another at an adjacent pair: adjacent pairs decide.
        """
        ordered = sorted(inputs, key=self.preorder.__getitem__)
        for first, second in pairwise(ordered):
            if not self._exclusive(first, second):
                return first, second
        return None

    def _gather_warnings(self, gather: GatherNode, inputs: list[int]) -> list[Problem]:
        """Return the double-token and exclusive-slot warnings of one gather."""
        by_slot: dict[str, list[int]] = {slot: [] for slot in gather.slots}
        for element in inputs:
            slot = self.link_of(element).edge.slot
            if slot in by_slot:
                by_slot[slot].append(element)
        filled = [(slot, fed) for slot, fed in by_slot.items() if fed]
        found = [self._double(gather, slot, fed) for slot, fed in filled]
        meets = [self._meet_all(fed) for _, fed in filled]
        for i, j in sorted(self._maybe_exclusive(meets)):
            found.append(self._exclusive_slots(gather, filled[i], filled[j]))
        return [problem for problem in found if problem is not None]

    def _maybe_exclusive(self, meets: list[int]) -> set[tuple[int, int]]:
        """Return the pairs (i < j) of slots, given the meet of each slot's inputs, that
        `_exclusive_slots` must look at: every other pair is never exclusive.

        Trying every pair cost seconds on a gather of a thousand slots (31.7 s at 5,000).
        Two slots whose meets are not one below the other part where their meets do, and
        every input pair of theirs parts there too, along the same two children: such a
        pair can only be exclusive if that parting element is a decision and both children
        are outcome edges. So the pairs are found in the tree that the meets' paths to the
        root span (at most the dominator tree): the pairs one below the other, met while
        walking it, and the pairs under two outcome edges of one decision.
        """
        children: dict[int, list[int]] = defaultdict(list)
        at: dict[int, list[int]] = defaultdict(list)  # element -> the slots whose meet it is
        spanned = {self.root}
        for slot, meet in enumerate(meets):
            at[meet].append(slot)
            element = meet
            while element not in spanned:
                spanned.add(element)
                children[self.parent[element]].append(element)
                element = self.parent[element]
        pairs: set[tuple[int, int]] = set()
        # One below (or at) another: the slots met on the way down pair with those below.
        above: list[int] = []
        stack: list[tuple[int, int]] = [(self.root, 0)]
        while stack:
            element, kept = stack.pop()
            del above[kept:]
            for slot in at.get(element, ()):
                pairs.update((min(slot, other), max(slot, other)) for other in above)
                above.append(slot)
            stack.extend((child, len(above)) for child in children.get(element, ()))
        # Apart, under two outcome edges of one decision.
        for element, below in children.items():
            if len(below) < 2 or element >= self.first_link or self.count[element] != 1:
                continue
            if self.flow.types[self.node_ids[element]] in _NOT_DECISIONS:
                continue
            groups = [self._slots_under(child, children, at) for child in below
                      if self._outcome_edge(child) is not None]  # fmt: skip
            for g, group in enumerate(groups):
                for other in groups[g + 1 :]:
                    pairs.update((min(a, b), max(a, b)) for a in group for b in other)
        return pairs

    @staticmethod
    def _slots_under(
        element: int, children: Mapping[int, list[int]], at: Mapping[int, list[int]]
    ) -> list[int]:
        """Return the slots whose meet is the element or below it in the spanned tree."""
        found: list[int] = []
        stack = [element]
        while stack:
            current = stack.pop()
            found += at.get(current, ())
            stack.extend(children.get(current, ()))
        return found

    def _double(self, gather: GatherNode, slot: str, fed: list[int]) -> Problem | None:
        """Warn when a slot can receive two tokens in one activation."""
        crowded = next((e for e in fed if self.count[e] >= _CAP), None)
        if crowded is not None:
            link = self.link_of(crowded)
            reason = (
                f"edge {link.shown} can carry tokens of several concurrent branches, which meet "
                f"before it without a gather"
            )
        else:
            pair = self._first_overlap(fed)
            if pair is None:
                return None
            other, link = self.link_of(pair[0]), self.link_of(pair[1])
            reason = f"edges {other.shown} and {link.shown} can both be taken in one activation"
        message = (
            f"Slot `{slot}` of gather `{gather.id}` can receive two tokens in one activation: "
            f"{reason}. The second token fails the activation; give each concurrent path its own "
            f"slot."
        )
        return make_problem(ProblemCode.GATHER_SLOT_DOUBLE, message, node=gather.id, link=link)

    def _exclusive_slots(
        self, gather: GatherNode, first: tuple[str, list[int]], second: tuple[str, list[int]]
    ) -> Problem | None:
        """Warn when two slots are fed only by mutually exclusive outcomes of one decision."""
        (slot, fed), (other, other_fed) = first, second
        if len(fed) * len(other_fed) <= _EXACT_PAIR_BUDGET:
            exclusive = all(self._exclusive(a, b) for a in fed for b in other_fed)
        else:
            # Too many pairs to try: the slots' own meets are a sound (if weaker) stand-in.
            exclusive = self._exclusive(self._meet_all(fed), self._meet_all(other_fed))
        if not exclusive:
            return None
        decision = self.node_ids[self._split(fed[0], other_fed[0])[0]]
        message = (
            f"Slots `{slot}` and `{other}` of gather `{gather.id}` can never both be filled: the "
            f"paths into them part at {self.flow.describe(decision)}, which takes only one "
            f"outcome, so the gather would wait forever. Feed alternatives into one slot, or fork "
            f"first."
        )
        return make_problem(
            ProblemCode.GATHER_SLOT_EXCLUSIVE, message, node=gather.id, field="slots"
        )

    def _dangling_branch_warnings(self) -> list[Problem]:
        """Warn about fork branches with no path to a gather, an end or a back-edge."""
        settled = self._settling_nodes()
        return [
            make_problem(
                ProblemCode.FORK_BRANCH_DANGLING,
                f"Branch `{link.edge.branch}` of fork `{node_id}` reaches no gather and no end, so "
                f"its work is never joined; lead it into a gather slot or an end.",
                node=node_id,
                link=link,
            )
            for node_id in self.node_ids
            if self.flow.types[node_id] is NodeType.FORK
            for link in self.flow.out.get(node_id, ())
            if link.edge.branch is not None and link.edge.target not in settled
        ]

    def _settling_nodes(self) -> set[str]:
        """Return the nodes with a path to a gather, an end, or a back-edge."""
        settling = {NodeType.GATHER, NodeType.END}
        seeds = {n for n in self.node_ids if self.flow.types[n] in settling}
        seeds |= {link.edge.source for link in self.flow.known if link.index in self.back_edges}
        predecessors: dict[str, list[str]] = defaultdict(list)
        for link in self.links:
            predecessors[link.edge.target].append(link.edge.source)
        queue = deque(seeds)
        while queue:
            for source in predecessors.get(queue.popleft(), ()):
                if source not in seeds:
                    seeds.add(source)
                    queue.append(source)
        return seeds
