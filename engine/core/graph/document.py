"""A whole flow version (`Graph`) and its decoding from a document, edges and state included."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final

from engine.core.graph.node_decoding import NodeDecoder
from engine.core.graph.nodes import Edge, Node, StateField
from engine.core.graph.reading import (
    ABSENT,
    DamagedEdge,
    FormatIssue,
    GraphFormatError,
    Reader,
    Where,
    json_type_name,
)
from engine.core.graph.vocabulary import (
    CEL_RESERVED,
    FORMAT,
    IDENTIFIER,
    FormatCode,
    JsonObject,
    NodeType,
    Reducer,
    copy_json,
    is_json,
)


@dataclass(frozen=True, kw_only=True)
class Graph:
    """One flow version; `name`, `state` and `layout` are None when absent from the document."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    name: str | None = None
    state: tuple[StateField, ...] | None = None
    layout: JsonObject | None = field(default=None, compare=True)
    # The optional JSON Schema of the run's input (engine/core/inputs.py checks runs by it).
    input: JsonObject | None = None

    @classmethod
    def from_json(cls, document: object) -> Graph:
        """Return the graph of a document; raise GraphFormatError listing every format issue."""
        decoded = decode_document(document)
        if decoded.issues:
            raise GraphFormatError(decoded.issues)
        return decoded.graph

    @cached_property
    def nodes_by_id(self) -> Mapping[str, Node]:
        """Return every node by id."""
        return {node.id: node for node in self.nodes}

    @cached_property
    def state_fields(self) -> Mapping[str, StateField]:
        """Return every declared state field by name."""
        return {declared.name: declared for declared in self.state or ()}

    @cached_property
    def _outgoing(self) -> Mapping[str, tuple[Edge, ...]]:
        """Return the edges leaving each node, in document order."""
        grouped: dict[str, list[Edge]] = {}
        for edge in self.edges:
            grouped.setdefault(edge.source, []).append(edge)
        return {source: tuple(edges) for source, edges in grouped.items()}

    def node(self, node_id: str) -> Node:
        """Return the node with this id; raise KeyError if there is none."""
        return self.nodes_by_id[node_id]

    def outgoing(self, node_id: str) -> tuple[Edge, ...]:
        """Return the edges leaving a node, in document order."""
        return self._outgoing.get(node_id, ())

    def successor(self, node_id: str, outcome: str) -> Edge | None:
        """Return the edge a node's outcome continues on, or None if it is not wired."""
        return next((e for e in self.outgoing(node_id) if e.follows == outcome), None)

    def branch_edge(self, node_id: str, branch: str) -> Edge | None:
        """Return the edge of one fork or race branch, or None if it is not wired."""
        return next((e for e in self.outgoing(node_id) if e.branch == branch), None)

    def to_json(self) -> JsonObject:
        """Return the document: exactly the fields it was decoded from."""
        document: JsonObject = {"format": FORMAT}
        if self.name is not None:
            document["name"] = self.name
        if self.state is not None:
            document["state"] = {declared.name: declared.to_json() for declared in self.state}
        if self.input is not None:
            document["input"] = copy_json(self.input)
        document["nodes"] = [node.to_json() for node in self.nodes]
        document["edges"] = [edge.to_json() for edge in self.edges]
        if self.layout is not None:
            document["layout"] = copy_json(self.layout)
        return document


@dataclass(frozen=True, kw_only=True)
class DecodedDocument:
    """What decoding found: the (partial, when there are issues) graph and the issues."""

    graph: Graph
    issues: tuple[FormatIssue, ...]
    node_types: Mapping[str, NodeType | None]
    edge_indices: tuple[int, ...]
    damaged_edges: tuple[DamagedEdge, ...]
    declared_state: frozenset[str] | None  # None: `state` is unreadable, so names are unknown
    # The `as` of every foreach/loop with an id, decoded or not: a body keeps its variable
    # when its owner's config has an error, so the validator does not cascade.
    node_variables: Mapping[str, str] = field(default_factory=dict)


def _edge_reference(index: int, raw: Mapping[str, object]) -> str:
    """Return how problems name an edge that may be malformed."""
    edge_id, source, target = raw.get("id"), raw.get("source"), raw.get("target")
    if isinstance(edge_id, str) and edge_id:
        return edge_id
    if isinstance(source, str) and isinstance(target, str):
        return f"{source}->{target}"
    return f"edges[{index}]"


_EDGE_KEYS: Final = frozenset({"id", "source", "target", "outcome", "branch", "slot"})


class EdgeDecoder:
    """Decodes the `edges` list, keeping damaged edges' endpoints for reachability."""

    def __init__(self, issues: list[FormatIssue]) -> None:
        self.issues = issues
        self.ids: set[str] = set()
        self.damaged: list[DamagedEdge] = []

    def decode(self, index: int, raw: object) -> Edge | None:
        """Decode one edge, or return None when it has issues."""
        if not isinstance(raw, dict):
            where = f"edges[{index}]"
            issue = FormatIssue(
                code=FormatCode.FIELD_TYPE,
                message=f"`{where}` must be an object.",
                edge=where,
                edge_index=index,
                field=where,
            )
            self.issues.append(issue)
            return None
        fast = self._fast(raw)
        if fast is not None:
            return fast
        reader = Reader(raw, Where(edge=_edge_reference(index, raw), edge_index=index), self.issues)
        edge = self._read(reader)
        if (
            edge is None
            and isinstance(raw.get("source"), str)
            and isinstance(raw.get("target"), str)
        ):
            self.damaged.append(
                DamagedEdge(index=index, source=raw["source"], target=raw["target"])
            )
        return edge

    def _fast(self, raw: Mapping[str, object]) -> Edge | None:
        """Return the edge when nothing in it needs reporting (the common case), else None."""
        if not _EDGE_KEYS.issuperset(raw) or ("outcome" in raw and "branch" in raw):
            return None
        fields = {key: value for key, value in raw.items() if isinstance(value, str) and value}
        if len(fields) != len(raw) or "source" not in fields or "target" not in fields:
            return None
        edge_id = fields.get("id")
        if edge_id is not None:
            if edge_id in self.ids:
                return None
            self.ids.add(edge_id)
        return Edge(
            source=fields["source"],
            target=fields["target"],
            id=edge_id,
            outcome=fields.get("outcome"),
            branch=fields.get("branch"),
            slot=fields.get("slot"),
        )

    def _read(self, r: Reader) -> Edge | None:
        """Read an edge's fields."""
        edge_id = self._edge_id(r)
        source = r.string("source", required=True)
        target = r.string("target", required=True)
        outcome, branch, slot = r.string("outcome"), r.string("branch"), r.string("slot")
        if "outcome" in r.raw and "branch" in r.raw:
            r.report(
                FormatCode.EDGE_BRANCH_WITH_OUTCOME,
                "outcome",
                "A branch edge has no outcome: remove `outcome` or `branch`.",
            )
        if not r.finish() or source is None or target is None:
            return None
        return Edge(
            source=source, target=target, id=edge_id, outcome=outcome, branch=branch, slot=slot
        )

    def _edge_id(self, r: Reader) -> str | None:
        """Return the optional edge id if it is a non-empty string used once."""
        r.read.add("id")
        if "id" not in r.raw:
            return None
        edge_id = r.raw["id"]
        if not isinstance(edge_id, str) or not edge_id:
            r.report(
                FormatCode.EDGE_ID_INVALID,
                "id",
                f"Edge id must be a non-empty string, not {edge_id!r}.",
            )
            return None
        if edge_id in self.ids:
            r.report(FormatCode.EDGE_ID_DUPLICATE, "id", f"Edge id `{edge_id}` is used twice.")
            return None
        self.ids.add(edge_id)
        return edge_id


_DEFAULT_TYPES: Final[Mapping[Reducer, Callable[[object], bool]]] = {
    Reducer.OVERWRITE: lambda value: True,
    Reducer.APPEND: lambda value: isinstance(value, list),
    Reducer.UNION: lambda value: isinstance(value, list),
    Reducer.MERGE: lambda value: isinstance(value, dict),
    Reducer.SUM: lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    Reducer.MIN: lambda value: (
        value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))
    ),
    Reducer.MAX: lambda value: (
        value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))
    ),
}


def _decode_state_field(r: Reader, name: str, raw: object) -> StateField | None:
    """Decode one state field declaration."""
    if not IDENTIFIER.match(name) or name in CEL_RESERVED:
        r.report(
            FormatCode.STATE_NAME_INVALID,
            name,
            f"State field `{name}` needs a CEL identifier name (letters, digits, `_`).",
        )
        return None
    if not isinstance(raw, dict):
        r.report(FormatCode.FIELD_TYPE, name, f"`state.{name}` must be an object with a `reducer`.")
        return None
    nested = r.child(raw, f"{name}.")
    first = len(r.issues)
    reducer = nested.choice("reducer", Reducer, FormatCode.STATE_REDUCER_UNKNOWN, required=True)
    default = nested.value("default", required=False)
    nested.finish()
    if reducer is None or len(r.issues) > first:
        return None
    if default is ABSENT:
        return StateField(name=name, reducer=reducer)
    if not is_json(default) or not _DEFAULT_TYPES[reducer](default):
        nested.report(
            FormatCode.STATE_DEFAULT_INVALID,
            "default",
            f"`state.{name}.default` does not suit the `{reducer}` reducer.",
        )
        return None
    return StateField(name=name, reducer=reducer, default=copy_json(default), has_default=True)


def _decode_state(r: Reader) -> tuple[tuple[StateField, ...] | None, frozenset[str] | None]:
    """Decode the state declarations; also return every declared name, decoded or not."""
    raw = r.mapping("state")
    if raw is None:
        return None, None if "state" in r.raw else frozenset()
    nested = r.child(raw, "state.")
    fields = [_decode_state_field(nested, name, value) for name, value in raw.items()]
    return tuple(f for f in fields if f is not None), frozenset(raw)


def _decode_list(r: Reader, key: str) -> list[object]:
    """Return a required list field, or an empty list after reporting it."""
    value = r.value(key, required=True)
    if value is ABSENT:
        return []
    if not isinstance(value, list):
        r.wrong_type(key, "a list")
        return []
    return value


def _check_format(r: Reader) -> None:
    """Report a missing or different `format`."""
    r.read.add("format")
    value = r.raw.get("format", ABSENT)
    if value != FORMAT:
        shown = "missing" if value is ABSENT else f"{value!r}"
        r.report(
            FormatCode.DOCUMENT_FORMAT, "format", f'`format` is {shown}; it must be "{FORMAT}".'
        )


def decode_document(document: object) -> DecodedDocument:
    """Decode a document, collecting every local issue instead of stopping at the first."""
    issues: list[FormatIssue] = []
    if not isinstance(document, dict):
        message = f"A flow document is a JSON object, not {json_type_name(document)}."
        issues.append(FormatIssue(code=FormatCode.DOCUMENT_NOT_OBJECT, message=message))
        return _decoded(Graph(nodes=(), edges=()), issues, NodeDecoder(issues), EdgeDecoder(issues))
    r = Reader(document, Where(), issues)
    _check_format(r)
    name = r.string("name", non_empty=False)
    state, declared = _decode_state(r)
    node_decoder, edge_decoder = NodeDecoder(issues), EdgeDecoder(issues)
    nodes = [node_decoder.decode(i, raw) for i, raw in enumerate(_decode_list(r, "nodes"))]
    edges = [edge_decoder.decode(i, raw) for i, raw in enumerate(_decode_list(r, "edges"))]
    layout = r.json_object("layout")
    input_schema = r.json_object("input")
    r.finish()
    graph = Graph(
        nodes=tuple(n for n in nodes if n is not None),
        edges=tuple(e for e in edges if e is not None),
        name=name,
        state=state,
        layout=layout,
        input=input_schema,
    )
    indices = tuple(i for i, e in enumerate(edges) if e is not None)
    return _decoded(graph, issues, node_decoder, edge_decoder, indices, declared)


def _decoded(
    graph: Graph,
    issues: list[FormatIssue],
    nodes: NodeDecoder,
    edges: EdgeDecoder,
    indices: tuple[int, ...] = (),
    declared: frozenset[str] | None = frozenset(),
) -> DecodedDocument:
    """Bundle what decoding found."""
    return DecodedDocument(
        graph=graph,
        issues=tuple(issues),
        node_types=nodes.types,
        edge_indices=indices,
        damaged_edges=tuple(edges.damaged),
        declared_state=declared,
        node_variables=nodes.variables,
    )
