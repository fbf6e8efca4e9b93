/** What changed between two documents: nodes by id, edges by what they connect. */

import type { GraphDocument, GraphEdge } from "../graph/types";
import { edgeSourceHandle } from "./handles";

export interface GraphDiff {
  nodes: { added: string[]; removed: string[]; changed: string[] };
  /** Edges by key `source/handle->target[/slot]` (see edgeKey). */
  edges: { added: string[]; removed: string[] };
  /** Top-level members other than nodes, edges and layout that differ (name, state, input…). */
  members: string[];
  /** True when nothing but the layout differs. */
  same: boolean;
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
  return { nodes, edges, members, same };
}
