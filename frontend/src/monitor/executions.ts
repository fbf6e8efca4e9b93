/**
 * The execution tree of a run, built from the execution ids in its trace (CONTRACT §3):
 * `root:1:review:4:split.legal:1` is root → iteration/item 4 of `review` → branch `legal`
 * of `split`. A segment's kind comes from the trace event that opened it (item.started,
 * iteration.started, branch.started, subflow.started), else from its spelling.
 */

import type { TraceEvent } from "./types";

export type ExecutionKind = "root" | "iteration" | "item" | "branch" | "subflow" | "execution";
export type ExecutionStatus = "running" | "waiting" | "completed" | "failed" | "cancelled";

export interface Execution {
  id: string;
  parent: string | null;
  kind: ExecutionKind;
  /** The node that owns the segment (`review`, `split`), or `root`. */
  owner: string;
  /** The segment number (1-based), or the branch name for a branch. */
  label: string;
  number: number;
  depth: number;
  status: ExecutionStatus;
  children: string[];
  firstAt: string;
  lastAt: string;
}

export interface ExecutionTree {
  root: string | null;
  byId: Map<string, Execution>;
}

/** Split `root:1:split.a:1` into [["root", 1], ["split.a", 1]]; null when it does not parse. */
export function parseExecutionId(id: string): Array<[string, number]> | null {
  const parts = id.split(":");
  if (parts.length < 2 || parts.length % 2 !== 0) return null;
  const segments: Array<[string, number]> = [];
  for (let i = 0; i < parts.length; i += 2) {
    const name = parts[i]!;
    const number = Number(parts[i + 1]);
    if (name === "" || !/^\d+$/.test(parts[i + 1]!) || number < 1) return null;
    segments.push([name, number]);
  }
  return segments[0]![0] === "root" ? segments : null;
}

/** Return the id one segment up, or null for the root. */
export function parentId(id: string): string | null {
  const parts = id.split(":");
  return parts.length <= 2 ? null : parts.slice(0, -2).join(":");
}

/** Whether `ancestor` is `id` or one of its ancestors. */
export function isWithin(id: string, ancestor: string): boolean {
  return id === ancestor || id.startsWith(`${ancestor}:`);
}

/** Events an owner node (foreach, loop, fork, race, subflow) writes under the child execution it opens or closes. */
const OWNER_EVENTS: ReadonlySet<string> = new Set([
  "item.started",
  "item.finished",
  "item.failed",
  "iteration.started",
  "branch.started",
  "subflow.started",
]);

/**
 * The execution an event says something about its node in: an owner's events about a
 * child execution (item 3 started) belong to the owner's own execution, one level up.
 */
export function eventExecution(event: { event: string; execution_id: string }): string {
  return OWNER_EVENTS.has(event.event) ? (parentId(event.execution_id) ?? event.execution_id) : event.execution_id;
}

const OPENING_KIND: Readonly<Record<string, ExecutionKind>> = {
  "item.started": "item",
  "iteration.started": "iteration",
  "branch.started": "branch",
  "subflow.started": "subflow",
};

function kindBySpelling(name: string, isRoot: boolean): ExecutionKind {
  if (isRoot) return "root";
  return name.includes(".") ? "branch" : "execution";
}

function newExecution(id: string, kind: ExecutionKind, at: string): Execution | null {
  const segments = parseExecutionId(id);
  if (segments === null) return null;
  const [name, number] = segments[segments.length - 1]!;
  const dot = name.indexOf(".");
  const branch = kind === "branch" || (kind === "execution" && dot > 0);
  return {
    id,
    parent: parentId(id),
    kind: kind === "execution" && dot > 0 ? "branch" : kind,
    owner: branch && dot > 0 ? name.slice(0, dot) : name,
    label: branch && dot > 0 ? name.slice(dot + 1) : String(number),
    number,
    depth: segments.length - 1,
    status: "running",
    children: [],
    firstAt: at,
    lastAt: at,
  };
}

/** Add `id` and any missing ancestors to the tree; return the execution. */
function ensure(byId: Map<string, Execution>, id: string, kind: ExecutionKind | null, at: string): Execution | null {
  const known = byId.get(id);
  if (known !== undefined) {
    if (kind !== null && known.kind === "execution") known.kind = kind;
    return known;
  }
  const segments = parseExecutionId(id);
  if (segments === null) return null;
  const isRoot = segments.length === 1;
  const made = newExecution(id, kind ?? kindBySpelling(segments[segments.length - 1]![0], isRoot), at);
  if (made === null) return null;
  byId.set(id, made);
  if (made.parent !== null) {
    ensure(byId, made.parent, null, at)?.children.push(id);
  }
  return made;
}

/** Events that settle an execution's own status. */
function settle(execution: Execution, event: TraceEvent, open: Map<string, number>): void {
  switch (event.event) {
    case "node.failed":
    case "item.failed":
      execution.status = "failed";
      break;
    case "frame.cancelled":
      if (execution.status !== "failed") execution.status = "cancelled";
      break;
    case "item.finished":
    case "path.ended":
      if (execution.status === "running" || execution.status === "waiting") execution.status = "completed";
      break;
    case "paused":
      open.set(execution.id, (open.get(execution.id) ?? 0) + 1);
      break;
    case "resumed":
      open.set(execution.id, (open.get(execution.id) ?? 0) - 1);
      break;
    default:
  }
}

function finish(tree: ExecutionTree, runStatus: string, open: Map<string, number>): void {
  for (const execution of tree.byId.values()) {
    if (execution.status === "running" && (open.get(execution.id) ?? 0) > 0) {
      execution.status = "waiting";
    }
    if (execution.status === "running" || execution.status === "waiting") {
      if (runStatus === "completed") execution.status = "completed";
      else if (runStatus === "failed" || runStatus === "cancelled") execution.status = "cancelled";
    }
  }
  // The root stands for the whole run.
  const root = tree.root === null ? undefined : tree.byId.get(tree.root);
  if (root !== undefined && runStatus !== "unknown") {
    root.status = (runStatus === "running" || runStatus === "waiting" || runStatus === "completed" ||
      runStatus === "failed" || runStatus === "cancelled") ? runStatus : root.status;
  }
}

/** Build the execution tree from trace events (in `seq` order) and the run's status. */
export function buildExecutionTree(events: readonly TraceEvent[], runStatus: string): ExecutionTree {
  const byId = new Map<string, Execution>();
  const open = new Map<string, number>();
  for (const event of events) {
    const execution = ensure(byId, event.execution_id, OPENING_KIND[event.event] ?? null, event.at);
    if (execution === null) continue;
    if (OPENING_KIND[event.event] !== undefined && typeof event.node === "string") {
      const segments = parseExecutionId(execution.id)!;
      const name = segments[segments.length - 1]![0];
      // A subflow's inner segments are named by node id; the event names the path.
      if (!name.includes(".")) execution.owner = name;
    }
    execution.lastAt = event.at;
    for (let up = execution.parent; up !== null; up = byId.get(up)?.parent ?? null) {
      const ancestor = byId.get(up);
      if (ancestor !== undefined) ancestor.lastAt = event.at;
    }
    settle(execution, event, open);
  }
  const tree = { root: byId.has("root:1") ? "root:1" : (byId.keys().next().value ?? null), byId };
  finish(tree, runStatus, open);
  for (const execution of byId.values()) {
    execution.children.sort((a, b) => compareIds(a, b));
  }
  return tree;
}

/** Order sibling ids by owner, then number (numerically, so item 10 follows item 9). */
export function compareIds(a: string, b: string): number {
  const sa = parseExecutionId(a) ?? [];
  const sb = parseExecutionId(b) ?? [];
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    const [na, xa] = sa[i]!;
    const [nb, xb] = sb[i]!;
    if (na !== nb) return na < nb ? -1 : 1;
    if (xa !== xb) return xa - xb;
  }
  return sa.length - sb.length;
}

/** A group of one execution's children of one kind and owner ("items of lines"). */
export interface ChildGroup {
  key: string;
  parent: string;
  kind: ExecutionKind;
  owner: string;
  ids: string[];
  counts: Partial<Record<ExecutionStatus, number>>;
}

const GROUP_NOUN: Readonly<Record<ExecutionKind, string>> = {
  root: "runs",
  iteration: "iterations",
  item: "items",
  branch: "branches",
  subflow: "subflow calls",
  execution: "executions",
};

const STATUS_ORDER: readonly ExecutionStatus[] = ["completed", "running", "waiting", "failed", "cancelled"];

/** Return an execution's children grouped by kind and owner, each with its status counts. */
export function childGroups(tree: ExecutionTree, id: string): ChildGroup[] {
  const execution = tree.byId.get(id);
  if (execution === undefined) return [];
  const groups = new Map<string, ChildGroup>();
  for (const childId of execution.children) {
    const child = tree.byId.get(childId)!;
    const key = `${id}|${child.kind}|${child.owner}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = { key, parent: id, kind: child.kind, owner: child.owner, ids: [], counts: {} };
      groups.set(key, group);
    }
    group.ids.push(childId);
    group.counts[child.status] = (group.counts[child.status] ?? 0) + 1;
  }
  return [...groups.values()];
}

/** "items of lines: 41 completed, 3 waiting, 1 failed". */
export function groupSummary(group: ChildGroup): string {
  const counts = STATUS_ORDER.filter((status) => (group.counts[status] ?? 0) > 0)
    .map((status) => `${group.counts[status]} ${status}`)
    .join(", ");
  return `${GROUP_NOUN[group.kind]} of ${group.owner}: ${counts}`;
}

/** How one execution reads in the tree: "item 3", "iteration 2", "branch legal", "subflow assess". */
export function executionTitle(execution: Execution): string {
  switch (execution.kind) {
    case "root":
      return "run (root)";
    case "item":
      return `item ${execution.number}`;
    case "iteration":
      return `iteration ${execution.number}`;
    case "branch":
      return `branch ${execution.label}`;
    case "subflow":
      return `subflow ${execution.owner}`;
    default:
      return `${execution.owner} ${execution.number}`;
  }
}

export type TreeRow =
  | { type: "execution"; id: string; depth: number; expandable: boolean }
  | { type: "group"; key: string; depth: number; group: ChildGroup };

/**
 * Flatten the tree into the rows to draw: an execution, then (when expanded) its child
 * groups, then (when a group is expanded) the group's executions. Only what is expanded
 * is listed, and the list itself is windowed by the view. A group of at most
 * `autoOpenUpTo` executions starts open: `expanded` then names the ones closed.
 */
export function visibleRows(tree: ExecutionTree, expanded: ReadonlySet<string>, autoOpenUpTo = 0): TreeRow[] {
  const rows: TreeRow[] = [];
  if (tree.root === null) return rows;
  const stack: TreeRow[] = [{ type: "execution", id: tree.root, depth: 0, expandable: true }];
  while (stack.length > 0) {
    const row = stack.pop()!;
    rows.push(row);
    if (row.type === "execution") {
      const execution = tree.byId.get(row.id)!;
      if (execution.children.length === 0 || !expanded.has(row.id)) continue;
      const groups = childGroups(tree, row.id);
      for (let i = groups.length - 1; i >= 0; i--) {
        stack.push({ type: "group", key: groups[i]!.key, depth: row.depth + 1, group: groups[i]! });
      }
    } else if (expanded.has(row.key) !== row.group.ids.length <= autoOpenUpTo) {
      const ids = row.group.ids;
      for (let i = ids.length - 1; i >= 0; i--) {
        const child = tree.byId.get(ids[i]!)!;
        stack.push({ type: "execution", id: child.id, depth: row.depth + 1, expandable: child.children.length > 0 });
      }
    }
  }
  for (const row of rows) {
    if (row.type === "execution") row.expandable = tree.byId.get(row.id)!.children.length > 0;
  }
  return rows;
}

/** The rows to mount for a fixed-height window: [first, last) indexes, with `overscan` extra. */
export function windowRange(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  total: number,
  overscan = 8,
): [number, number] {
  const first = Math.min(total, Math.max(0, Math.floor(scrollTop / rowHeight) - overscan));
  const last = Math.min(total, Math.ceil((scrollTop + viewportHeight) / rowHeight) + overscan);
  return [first, Math.max(first, last)];
}
