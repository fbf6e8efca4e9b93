/**
 * Edits of a `braid.graph/1` document as pure functions: each returns a new
 * document and never changes its argument, so whole-document snapshots can
 * go into the undo history.
 */

import type { GraphDocument, GraphEdge, GraphNode, NodeType, Point } from "../graph/types";

export const ID_PATTERN = /^[A-Za-z0-9_-]+$/;

/** One-line descriptions for the palette, in the contract's table order. */
export const NODE_DESCRIPTIONS: Record<NodeType, string> = {
  start: "Where the run begins; exactly one per flow.",
  end: "Ends its scope: the run, or a subflow.",
  task: "Runs a registered action with params.",
  set: "Writes state fields from CEL expressions.",
  if: "Takes true or false from a CEL condition.",
  switch: "Takes the first case whose condition holds, else the default.",
  fork: "Starts one branch per declared name, in parallel.",
  gather: "Waits for one arrival per slot, then merges them in slot order.",
  foreach: "Runs its body once per item of a list.",
  loop: "Repeats its body while a condition holds.",
  race: "Runs branches; the first to return wins, the rest are cancelled.",
  approval: "Pauses until people in the chosen groups decide.",
  wait: "Pauses for some seconds or until a time.",
  subflow: "Runs another published flow as one step.",
  fail: "Fails the run with a message.",
};

/** A palette icon per type (text glyphs: no image requests, readable without color). */
export const NODE_ICONS: Record<NodeType, string> = {
  start: "▶",
  end: "■",
  task: "⚙",
  set: "✎",
  if: "◇",
  switch: "⋔",
  fork: "⇉",
  gather: "⊕",
  foreach: "↻",
  loop: "⟳",
  race: "⚑",
  approval: "✔",
  wait: "⏱",
  subflow: "⧉",
  fail: "✖",
};

/** A new node's config: the smallest the validator accepts, or close to it. */
export function defaultNode(type: NodeType, id: string): GraphNode {
  switch (type) {
    case "start":
    case "end":
      return { id, type };
    case "task":
      return { id, type, action: "noop", params: {} };
    case "set":
      return { id, type, values: {} };
    case "if":
      return { id, type, condition: "true" };
    case "switch":
      return { id, type, cases: [{ when: "true", outcome: "first" }], default: "other" };
    case "fork":
    case "race":
      return { id, type, branches: ["a", "b"] };
    case "gather":
      return { id, type, slots: ["a", "b"], conflicts: "error" };
    case "foreach":
      return { id, type, items: "[]", as: "item", concurrency: 1, on_item_failure: "fail" };
    case "loop":
      return { id, type, while: "false", max_iterations: 10 };
    case "approval":
      return { id, type, groups: [], policy: "all", title: "" };
    case "wait":
      return { id, type, seconds: 60 };
    case "subflow":
      return { id, type, flow: "" };
    case "fail":
      return { id, type, error: "failed" };
  }
}

/** Return `base` if no node has it, else `base2`, `base3`, … */
export function freeId(doc: GraphDocument, base: string, taken: ReadonlySet<string> = new Set()): string {
  const used = new Set([...doc.nodes.map((node) => node.id), ...taken]);
  const stem = base.replace(/[^A-Za-z0-9_-]/g, "_") || "node";
  if (!used.has(stem)) return stem;
  const root = stem.replace(/\d+$/, "") || stem;
  for (let n = 2; ; n += 1) {
    if (!used.has(`${root}${n}`)) return `${root}${n}`;
  }
}

function withLayout(doc: GraphDocument, layout: Record<string, Point>): GraphDocument {
  return { ...doc, layout };
}

/** Add a node of a type at a position; returns the new document and the node's id. */
export function addNode(doc: GraphDocument, type: NodeType, position: Point): { doc: GraphDocument; id: string } {
  const id = freeId(doc, type);
  const next = { ...doc, nodes: [...doc.nodes, defaultNode(type, id)] };
  return { doc: withLayout(next, { ...(doc.layout ?? {}), [id]: roundPoint(position) }), id };
}

export function roundPoint(point: Point): Point {
  return { x: Math.round(point.x), y: Math.round(point.y) };
}

export function addEdge(doc: GraphDocument, edge: GraphEdge): GraphDocument {
  return { ...doc, edges: [...doc.edges, edge] };
}

/** Remove nodes (with every edge touching them and their layout) and edges by index. */
export function removeElements(
  doc: GraphDocument,
  nodeIds: ReadonlySet<string>,
  edgeIndices: ReadonlySet<number> = new Set(),
): GraphDocument {
  const edges = doc.edges.filter(
    (edge, index) => !edgeIndices.has(index) && !nodeIds.has(edge.source) && !nodeIds.has(edge.target),
  );
  const next: GraphDocument = { ...doc, nodes: doc.nodes.filter((node) => !nodeIds.has(node.id)), edges };
  if (doc.layout !== undefined) {
    next.layout = Object.fromEntries(Object.entries(doc.layout).filter(([id]) => !nodeIds.has(id)));
  }
  return next;
}

/** Set positions for some nodes (rounded to whole pixels). */
export function moveNodes(doc: GraphDocument, positions: Record<string, Point>): GraphDocument {
  const layout = { ...(doc.layout ?? {}) };
  for (const [id, point] of Object.entries(positions)) layout[id] = roundPoint(point);
  return withLayout(doc, layout);
}

/** Replace a node's config; a changed id is carried into edges and layout. */
export function replaceNode(doc: GraphDocument, oldId: string, node: GraphNode): GraphDocument {
  const nodes = doc.nodes.map((n) => (n.id === oldId ? node : n));
  if (node.id === oldId) return { ...doc, nodes };
  const rename = (id: string): string => (id === oldId ? node.id : id);
  const edges = doc.edges.map((edge) =>
    edge.source === oldId || edge.target === oldId
      ? { ...edge, source: rename(edge.source), target: rename(edge.target) }
      : edge,
  );
  const next: GraphDocument = { ...doc, nodes, edges };
  if (doc.layout !== undefined) {
    next.layout = Object.fromEntries(Object.entries(doc.layout).map(([id, p]) => [rename(id), p]));
  }
  return next;
}

/** Why a node id cannot be used, or null when it can. */
export function idProblem(doc: GraphDocument, oldId: string, id: string): string | null {
  if (!ID_PATTERN.test(id)) return "Use letters, digits, _ and - only.";
  if (id !== oldId && doc.nodes.some((node) => node.id === id)) return `Another node is called ${id}.`;
  return null;
}

type NamedList = "branches" | "slots";

/** Which edge field a fork/race branch or gather slot list is spelt in. */
function listEdgeField(list: NamedList): "branch" | "slot" {
  return list === "branches" ? "branch" : "slot";
}

function edgeTouches(edge: GraphEdge, nodeId: string, list: NamedList): boolean {
  return list === "branches" ? edge.source === nodeId : edge.target === nodeId;
}

/**
 * Rename a fork/race branch or a gather slot, carrying the name into the
 * edges that spell it (and a race's winner outcomes).
 */
export function renameListEntry(doc: GraphDocument, nodeId: string, list: NamedList, from: string, to: string): GraphDocument {
  const field = listEdgeField(list);
  const nodes = doc.nodes.map((node) => {
    if (node.id !== nodeId) return node;
    const values = ((node as unknown as Record<string, unknown>)[list] as string[] | undefined) ?? [];
    return { ...node, [list]: values.map((v) => (v === from ? to : v)) } as GraphNode;
  });
  const race = doc.nodes.find((node) => node.id === nodeId)?.type === "race";
  const edges = doc.edges.map((edge) => {
    if (!edgeTouches(edge, nodeId, list)) return edge;
    if (edge[field] === from) return { ...edge, [field]: to };
    if (race && edge.outcome === from) return { ...edge, outcome: to };
    return edge;
  });
  return { ...doc, nodes, edges };
}

/** Add a branch or slot at the end of the list. */
export function addListEntry(doc: GraphDocument, nodeId: string, list: NamedList, name: string): GraphDocument {
  const nodes = doc.nodes.map((node) => {
    if (node.id !== nodeId) return node;
    const values = ((node as unknown as Record<string, unknown>)[list] as string[] | undefined) ?? [];
    return { ...node, [list]: [...values, name] } as GraphNode;
  });
  return { ...doc, nodes };
}

/** Remove a branch or slot, with the edges that spell it. */
export function removeListEntry(doc: GraphDocument, nodeId: string, list: NamedList, name: string): GraphDocument {
  const field = listEdgeField(list);
  const nodes = doc.nodes.map((node) => {
    if (node.id !== nodeId) return node;
    const values = ((node as unknown as Record<string, unknown>)[list] as string[] | undefined) ?? [];
    return { ...node, [list]: values.filter((v) => v !== name) } as GraphNode;
  });
  const edges = doc.edges.filter((edge) => !(edgeTouches(edge, nodeId, list) && edge[field] === name));
  return { ...doc, nodes, edges };
}

/** Move a branch or slot one place up (-1) or down (+1): a gather's slot order is its merge order. */
export function moveListEntry(doc: GraphDocument, nodeId: string, list: NamedList, name: string, by: -1 | 1): GraphDocument {
  const nodes = doc.nodes.map((node) => {
    if (node.id !== nodeId) return node;
    const values = [...(((node as unknown as Record<string, unknown>)[list] as string[] | undefined) ?? [])];
    const at = values.indexOf(name);
    const to = at + by;
    if (at < 0 || to < 0 || to >= values.length) return node;
    [values[at], values[to]] = [values[to]!, values[at]!];
    return { ...node, [list]: values } as GraphNode;
  });
  return { ...doc, nodes };
}

/** What copy puts on the clipboard: nodes, the edges among them, their positions. */
export interface Clipboard {
  format: "braid.clipboard/1";
  nodes: GraphNode[];
  edges: GraphEdge[];
  layout: Record<string, Point>;
}

export function copyNodes(doc: GraphDocument, ids: ReadonlySet<string>): Clipboard {
  const layout: Record<string, Point> = {};
  for (const id of ids) {
    const point = doc.layout?.[id];
    if (point !== undefined) layout[id] = point;
  }
  return {
    format: "braid.clipboard/1",
    nodes: structuredClone(doc.nodes.filter((node) => ids.has(node.id))),
    edges: structuredClone(doc.edges.filter((edge) => ids.has(edge.source) && ids.has(edge.target))),
    layout,
  };
}

export function isClipboard(value: unknown): value is Clipboard {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return v.format === "braid.clipboard/1" && Array.isArray(v.nodes) && Array.isArray(v.edges);
}

/** Paste a clipboard: fresh ids where taken, positions shifted by `offset`; returns the new ids. */
export function pasteNodes(doc: GraphDocument, clip: Clipboard, offset: Point): { doc: GraphDocument; ids: string[] } {
  const renamed = new Map<string, string>();
  const taken = new Set<string>();
  for (const node of clip.nodes) {
    const id = freeId(doc, node.id, taken);
    taken.add(id);
    renamed.set(node.id, id);
  }
  const nodes = clip.nodes.map((node) => ({ ...structuredClone(node), id: renamed.get(node.id)! }));
  const edges = clip.edges
    .filter((edge) => renamed.has(edge.source) && renamed.has(edge.target))
    .map((edge) => ({ ...structuredClone(edge), source: renamed.get(edge.source)!, target: renamed.get(edge.target)! }));
  const layout = { ...(doc.layout ?? {}) };
  clip.nodes.forEach((node, index) => {
    const at = clip.layout[node.id] ?? { x: index * 40, y: index * 40 };
    layout[renamed.get(node.id)!] = roundPoint({ x: at.x + offset.x, y: at.y + offset.y });
  });
  return { doc: { ...doc, nodes: [...doc.nodes, ...nodes], edges: [...doc.edges, ...edges], layout }, ids: [...renamed.values()] };
}

/** Duplicate nodes (and the edges among them) beside the originals. */
export function duplicateNodes(doc: GraphDocument, ids: ReadonlySet<string>, offset: Point = { x: 40, y: 40 }) {
  return pasteNodes(doc, copyNodes(doc, ids), offset);
}

function objectKeys(value: unknown): string[] {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? Object.keys(value) : [];
}

/** Which nodes write each state field (set values, task output, foreach errors, subflow output). */
export function stateWriters(doc: GraphDocument): Record<string, string[]> {
  const writers: Record<string, string[]> = {};
  const add = (field: unknown, nodeId: string): void => {
    if (typeof field !== "string" || field === "") return;
    const list = (writers[field] ??= []);
    if (!list.includes(nodeId)) list.push(nodeId);
  };
  for (const node of doc.nodes) {
    if (node.type === "set") objectKeys(node.values).forEach((field) => add(field, node.id));
    if (node.type === "task") add(node.output, node.id);
    if (node.type === "foreach") add(node.errors, node.id);
    if (node.type === "subflow") objectKeys(node.output).forEach((field) => add(field, node.id));
  }
  return writers;
}

/** Set or remove (undefined) config members of a node, keeping the others in their order. */
export function patchNode(doc: GraphDocument, nodeId: string, patch: Record<string, unknown>): GraphDocument {
  const node = doc.nodes.find((n) => n.id === nodeId);
  if (node === undefined) return doc;
  const next: Record<string, unknown> = { ...node };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) delete next[key];
    else next[key] = value;
  }
  return replaceNode(doc, nodeId, next as unknown as GraphNode);
}
