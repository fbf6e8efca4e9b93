/** What changed between two documents: nodes by id, edges by what they connect. */

import type { GraphDocument, GraphEdge } from "../graph/types";
import { edgeSourceHandle } from "./handles";

export interface GraphDiff {
  nodes: { added: string[]; removed: string[]; changed: string[] };
  /** Edges by key `source/handle->target[/slot]` (see edgeKey). */
  edges: { added: string[]; removed: string[] };
  /** Top-level members other than nodes, edges and layout that differ (name, state, input…). */
  members: string[];
  /** Each changed setting with both values, in document order (see `changes`). */
  changes: Change[];
  /** True when nothing but the layout differs. */
  same: boolean;
}

/**
 * One changed value: `before` is the first document's, `after` the second's; `undefined`
 * where that document lacks it. `subject` is a node id, an edge's source and handle
 * (`split/branch:legal`), a state field, or a top-level member (`name`, `input`).
 */
export interface Change {
  kind: "node" | "edge" | "state" | "flow";
  subject: string;
  /** The setting's path inside the subject (`values.total`, `cases[1].when`); "" for the whole. */
  setting: string;
  before: unknown;
  after: unknown;
}

/** Canonical JSON (sorted keys): member order carries no meaning. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export function edgeKey(edge: GraphEdge): string {
  return `${edge.source}/${edgeSourceHandle(edge)}->${edge.target}${edge.slot !== undefined ? `/slot:${edge.slot}` : ""}`;
}

function counted(keys: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}

function minus(a: Map<string, number>, b: Map<string, number>): string[] {
  const out: string[] = [];
  for (const [key, count] of a) {
    for (let n = b.get(key) ?? 0; n < count; n += 1) out.push(key);
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function join(prefix: string, key: string | number): string {
  if (typeof key === "number") return `${prefix}[${key}]`;
  return prefix === "" ? key : `${prefix}.${key}`;
}

/** Return the leaf paths where two values differ, with both values; objects and same-length lists are entered. */
export function valueChanges(before: unknown, after: unknown, path = ""): { setting: string; before: unknown; after: unknown }[] {
  if (canonical(before) === canonical(after)) return [];
  if (isRecord(before) && isRecord(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((key) => valueChanges(before[key], after[key], join(path, key)));
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    return before.flatMap((item, index) => valueChanges(item, after[index], join(path, index)));
  }
  return [{ setting: path, before, after }];
}

/** Return each edge's target by `source/handle` (slots kept with the target). */
function edgeTargets(doc: GraphDocument): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const edge of doc.edges) {
    const key = `${edge.source}/${edgeSourceHandle(edge)}`;
    out.set(key, [...(out.get(key) ?? []), edge.slot !== undefined ? `${edge.target} (slot ${edge.slot})` : edge.target]);
  }
  return out;
}

function edgeChanges(before: GraphDocument, after: GraphDocument): Change[] {
  const old = edgeTargets(before);
  const now = edgeTargets(after);
  const keys = [...new Set([...old.keys(), ...now.keys()])];
  const shown = (targets: string[] | undefined) => (targets === undefined ? undefined : targets.length === 1 ? targets[0] : targets);
  return keys
    .filter((key) => canonical(old.get(key)) !== canonical(now.get(key)))
    .map((key) => ({ kind: "edge" as const, subject: key, setting: "", before: shown(old.get(key)), after: shown(now.get(key)) }));
}

/** Return every changed setting of nodes in both documents, edges, state fields and other members. */
export function changesBetween(before: GraphDocument, after: GraphDocument): Change[] {
  const oldNodes = new Map(before.nodes.map((node) => [node.id, node]));
  const nodeChanges = after.nodes
    .filter((node) => oldNodes.has(node.id))
    .flatMap((node) => valueChanges(oldNodes.get(node.id), node).map((c) => ({ kind: "node" as const, subject: node.id, ...c })));
  const oldState = before.state ?? {};
  const newState = after.state ?? {};
  const fields = [...new Set([...Object.keys(oldState), ...Object.keys(newState)])];
  const stateChanges = fields.flatMap((field) =>
    valueChanges(oldState[field], newState[field]).map((c) => ({ kind: "state" as const, subject: field, ...c })),
  );
  const skip = new Set(["nodes", "edges", "layout", "state"]);
  const members = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => !skip.has(k));
  const record = (doc: GraphDocument) => doc as unknown as Record<string, unknown>;
  const flowChanges = members.flatMap((member) =>
    valueChanges(record(before)[member], record(after)[member]).map((c) => ({ kind: "flow" as const, subject: member, ...c })),
  );
  return [...nodeChanges, ...edgeChanges(before, after), ...stateChanges, ...flowChanges];
}

/** Return what `after` adds, removes and changes relative to `before` (layout aside). */
export function diffGraphs(before: GraphDocument, after: GraphDocument): GraphDiff {
  const old = new Map(before.nodes.map((node) => [node.id, canonical(node)]));
  const now = new Map(after.nodes.map((node) => [node.id, canonical(node)]));
  const nodes = {
    added: [...now.keys()].filter((id) => !old.has(id)),
    removed: [...old.keys()].filter((id) => !now.has(id)),
    changed: [...now.keys()].filter((id) => old.has(id) && old.get(id) !== now.get(id)),
  };
  const oldEdges = counted(before.edges.map(edgeKey));
  const newEdges = counted(after.edges.map(edgeKey));
  const edges = { added: minus(newEdges, oldEdges), removed: minus(oldEdges, newEdges) };
  const skip = new Set(["nodes", "edges", "layout"]);
  const keys = new Set([...Object.keys(before), ...Object.keys(after)].filter((k) => !skip.has(k)));
  const members = [...keys].filter(
    (k) => canonical((before as unknown as Record<string, unknown>)[k]) !== canonical((after as unknown as Record<string, unknown>)[k]),
  );
  const same =
    nodes.added.length + nodes.removed.length + nodes.changed.length + edges.added.length + edges.removed.length + members.length === 0;
  return { nodes, edges, members, changes: same ? [] : changesBetween(before, after), same };
}

/** Return how a changed value reads: compact JSON, `(none)` where absent, long values cut at `max`. */
export function shownValue(value: unknown, max = 80): string {
  if (value === undefined) return "(none)";
  const text = JSON.stringify(value);
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Return what a change is about, in words: `fin` title, edge `split` → legal, state `total` reducer. */
export function changeWhere(change: Change): string {
  const setting = change.setting === "" ? "" : ` ${change.setting}`;
  switch (change.kind) {
    case "node":
      return `${change.subject}${setting}`;
    case "edge": {
      const [source, handle] = change.subject.split("/");
      const [kind, name] = (handle ?? "").split(":");
      return `edge ${source} ${kind === "branch" ? "branch" : "on"} ${name}`;
    }
    case "state":
      return `state ${change.subject}${setting}`;
    default:
      return `${change.subject}${setting}`;
  }
}
