/**
 * Handle rules per node type: which outcome/branch handles a node offers,
 * which target handles it has, and whether a connection may be drawn.
 *
 * Pure TypeScript (no React): the editor and its vitest tests share it.
 */

import type { GraphDocument, GraphEdge, GraphNode } from "../graph/types";
import { RETURN_TARGET_TYPES } from "../graph/types";

/** The target handle an ordinary edge enters by. */
export const IN_HANDLE = "in";
/** The target handle a body's return enters by (foreach, loop, race); same id as the viewer's. */
export const RETURN_HANDLE = "return";

export type SourceKind = "outcome" | "branch";

export interface SourceHandle {
  /** `outcome:<name>` or `branch:<name>`. */
  id: string;
  kind: SourceKind;
  name: string;
  /** What the handle shows: the outcome or branch name (a race's winners read "won x"). */
  label: string;
}

export interface TargetHandle {
  /** `in`, `return` or `slot:<name>`. */
  id: string;
  label: string;
  slot?: string;
}

export function outcomeHandle(name: string): string {
  return `outcome:${name}`;
}

export function branchHandle(name: string): string {
  return `branch:${name}`;
}

export function slotHandle(name: string): string {
  return `slot:${name}`;
}

/** Split a source handle id into its kind and name; null for anything else. */
export function parseSourceHandle(id: string | null | undefined): { kind: SourceKind; name: string } | null {
  if (typeof id !== "string") return null;
  const colon = id.indexOf(":");
  const kind = id.slice(0, colon);
  if (colon < 0 || (kind !== "outcome" && kind !== "branch")) return null;
  return { kind, name: id.slice(colon + 1) };
}

/** Return the slot a target handle id names, or null. */
export function parseSlotHandle(id: string | null | undefined): string | null {
  return typeof id === "string" && id.startsWith("slot:") ? id.slice(5) : null;
}

function names(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string" && v !== "") : [];
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

/** The outcomes each node type can produce (a task's come from its action). */
export function outcomesOf(node: GraphNode, actionOutcomes: Record<string, string[]> = {}): string[] {
  switch (node.type) {
    case "end":
    case "fail":
    case "fork":
      return [];
    case "start":
    case "set":
    case "gather":
    case "wait":
    case "subflow":
      return ["next"];
    case "task": {
      const declared = typeof node.action === "string" ? (actionOutcomes[node.action] ?? []) : [];
      return unique(["next", ...declared]);
    }
    case "if":
      return ["true", "false"];
    case "switch": {
      const cases = Array.isArray(node.cases) ? node.cases : [];
      const caseOutcomes = cases.map((c) => (c && typeof c.outcome === "string" ? c.outcome : "")).filter(Boolean);
      const fallback = typeof node.default === "string" && node.default !== "" ? [node.default] : [];
      return unique([...caseOutcomes, ...fallback]);
    }
    case "foreach":
      return ["item", "done"];
    case "loop":
      return ["body", "done", "exhausted"];
    case "race":
      return unique([...names(node.branches), "next"]);
    case "approval":
      return ["approved", "rejected"];
  }
}

/** The branches a fork or race declares; none for other types. */
export function branchesOf(node: GraphNode): string[] {
  return node.type === "fork" || node.type === "race" ? unique(names(node.branches)) : [];
}

/** Every source handle of a node, branches first, then outcomes in the type's order. */
export function sourceHandles(node: GraphNode, actionOutcomes: Record<string, string[]> = {}): SourceHandle[] {
  const branches = branchesOf(node).map(
    (name): SourceHandle => ({ id: branchHandle(name), kind: "branch", name, label: name }),
  );
  const race = node.type === "race";
  const outcomes = outcomesOf(node, actionOutcomes).map(
    (name): SourceHandle => ({
      id: outcomeHandle(name),
      kind: "outcome",
      name,
      label: race && name !== "next" ? `won ${name}` : name,
    }),
  );
  return [...branches, ...outcomes];
}

/** Every target handle of a node: none on start, one per slot on a gather, `in` (+ `return`) else. */
export function targetHandles(node: GraphNode): TargetHandle[] {
  if (node.type === "start") return [];
  if (node.type === "gather") {
    return unique(names(node.slots)).map((slot) => ({ id: slotHandle(slot), label: slot, slot }));
  }
  const handles: TargetHandle[] = [{ id: IN_HANDLE, label: "in" }];
  if (RETURN_TARGET_TYPES.has(node.type)) handles.push({ id: RETURN_HANDLE, label: "return" });
  return handles;
}

/** The source handle id an edge leaves by. */
export function edgeSourceHandle(edge: GraphEdge): string {
  return edge.branch !== undefined ? branchHandle(edge.branch) : outcomeHandle(edge.outcome ?? "next");
}

/** The target handle id an edge enters by (`back` for a body's return). */
export function edgeTargetHandle(edge: GraphEdge, target: GraphNode | undefined, back: boolean): string {
  if (edge.slot !== undefined) return slotHandle(edge.slot);
  if (back && target !== undefined && RETURN_TARGET_TYPES.has(target.type)) return RETURN_HANDLE;
  return IN_HANDLE;
}

export interface Connection {
  source: string;
  sourceHandle?: string | null;
  target: string;
  targetHandle?: string | null;
}

export type ConnectionCheck = { ok: true; edge: GraphEdge } | { ok: false; reason: string };

function refuse(reason: string): ConnectionCheck {
  return { ok: false, reason };
}

/** The edge a connection would add, or the reason it is refused. */
export function checkConnection(
  doc: GraphDocument,
  connection: Connection,
  actionOutcomes: Record<string, string[]> = {},
): ConnectionCheck {
  const byId = new Map(doc.nodes.map((node) => [node.id, node]));
  const source = byId.get(connection.source);
  const target = byId.get(connection.target);
  if (source === undefined || target === undefined) return refuse("Both ends must be nodes of this flow.");
  const handle = parseSourceHandle(connection.sourceHandle);
  if (handle === null) return refuse(`Start the connection from one of ${source.id}'s outcome handles.`);
  const offered = sourceHandles(source, actionOutcomes).some((h) => h.id === connection.sourceHandle);
  if (!offered) return refuse(`A ${source.type} cannot produce ${handle.kind} “${handle.name}”.`);
  if (source.id === target.id) return refuse("A node cannot connect to itself.");
  if (target.type === "start") return refuse("Nothing may enter the start node.");
  const edge: GraphEdge = { source: source.id, target: target.id };
  if (handle.kind === "branch") edge.branch = handle.name;
  else if (handle.name !== "next") edge.outcome = handle.name;
  const taken = doc.edges.find((e) => e.source === source.id && edgeSourceHandle(e) === connection.sourceHandle);
  if (taken !== undefined) {
    const what = handle.kind === "branch" ? `Branch “${handle.name}”` : `Outcome “${handle.name}”`;
    return refuse(`${what} of ${source.id} already leads to ${taken.target}; delete that edge first.`);
  }
  if (target.type === "gather") {
    const slot = parseSlotHandle(connection.targetHandle);
    if (slot === null || !names(target.slots).includes(slot)) {
      return refuse(`A connection into gather ${target.id} must land on one of its slots.`);
    }
    edge.slot = slot;
  } else if (connection.targetHandle === RETURN_HANDLE && !RETURN_TARGET_TYPES.has(target.type)) {
    return refuse(`Only a foreach, loop or race takes a return.`);
  }
  return { ok: true, edge };
}
