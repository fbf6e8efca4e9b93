/**
 * The execution tree of a run, as the server derives it (`GET /api/runs/<id>/executions/`,
 * the run socket's snapshot and deltas): the root, and every foreach item, loop iteration,
 * fork or race branch and subflow call, each with its status and why (CONTRACT §3, §4).
 * The browser groups, windows and draws these; it infers no status of its own.
 */

export const EXECUTION_KINDS = ["root", "item", "iteration", "branch", "subflow"] as const;
export type ExecutionKind = (typeof EXECUTION_KINDS)[number];
export const EXECUTION_STATUSES = ["running", "waiting", "completed", "failed", "cancelled"] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** One execution as the API and the sockets send it. */
export interface ServerExecution {
  id: string;
  parent: string | null;
  kind: ExecutionKind;
  /** The node path that opened it (`lines`, `pay/split`), or "" for the root. */
  owner: string;
  /** The item's or iteration's number, the branch's name, the subflow node's id; "run" for the root. */
  label: string;
  status: ExecutionStatus;
  /** Why it has its status, in words ("cancelled: the run was cancelled: …"). */
  reason: string;
  first_at: string;
  last_at: string;
}

/** One execution of the tree: the server's fields and its children, ordered. */
export interface Execution extends ServerExecution {
  children: string[];
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

function isServerExecution(value: unknown): value is ServerExecution {
  if (typeof value !== "object" || value === null) return false;
  const e = value as Record<string, unknown>;
  return (
    typeof e.id === "string" &&
    (e.parent === null || typeof e.parent === "string") &&
    (EXECUTION_KINDS as readonly unknown[]).includes(e.kind) &&
    typeof e.owner === "string" &&
    typeof e.label === "string" &&
    (EXECUTION_STATUSES as readonly unknown[]).includes(e.status) &&
    typeof e.reason === "string" &&
    typeof e.first_at === "string" &&
    typeof e.last_at === "string"
  );
}

/** Return the executions a message carries (its `executions` list), or null when it has none. */
export function executionsOf(message: unknown): ServerExecution[] | null {
  if (typeof message !== "object" || message === null) return null;
  const list = (message as Record<string, unknown>).executions;
  if (!Array.isArray(list)) return null;
  return list.filter(isServerExecution).map((e) => ({
    id: e.id, parent: e.parent, kind: e.kind, owner: e.owner, label: e.label,
    status: e.status, reason: e.reason, first_at: e.first_at, last_at: e.last_at,
  }));
}

/**
 * Return the executions after a delta: each changed one replaces the one of its id in
 * place, and one not seen before is added at the end. `current` is left as it was.
 */
export function mergeExecutions(current: readonly ServerExecution[], changed: readonly ServerExecution[]): ServerExecution[] {
  if (changed.length === 0) return current as ServerExecution[];
  const merged = [...current];
  const at = new Map(merged.map((e, index) => [e.id, index]));
  for (const execution of changed) {
    const index = at.get(execution.id);
    if (index === undefined) {
      at.set(execution.id, merged.length);
      merged.push(execution);
    } else {
      merged[index] = execution;
    }
  }
  return merged;
}

/**
 * Build the tree from the server's executions: each under its parent, siblings ordered by
 * owner and number (item 10 after item 9). An execution whose parent is not (yet) known
 * waits out of the tree until its parent arrives.
 */
export function buildExecutionTree(list: readonly ServerExecution[]): ExecutionTree {
  const byId = new Map<string, Execution>();
  for (const execution of list) byId.set(execution.id, { ...execution, children: [] });
  let root: string | null = null;
  for (const execution of byId.values()) {
    if (execution.parent === null) {
      if (root === null || execution.kind === "root") root = execution.id;
      continue;
    }
    byId.get(execution.parent)?.children.push(execution.id);
  }
  for (const execution of byId.values()) {
    if (execution.children.length > 1) execution.children.sort(compareIds);
  }
  return { root, byId };
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
      return `item ${execution.label}`;
    case "iteration":
      return `iteration ${execution.label}`;
    case "branch":
      return `branch ${execution.label}`;
    case "subflow":
      return `subflow ${execution.owner}`;
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
