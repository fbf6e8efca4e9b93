import { describe, expect, test } from "vitest";
import {
  buildExecutionTree,
  childGroups,
  compareIds,
  executionsOf,
  executionTitle,
  groupSummary,
  mergeExecutions,
  parentId,
  parseExecutionId,
  type ServerExecution,
  visibleRows,
  windowRange,
} from "../../src/monitor/executions";
import { BATCH_CANCELLED_EXECUTIONS, execution } from "./server";

describe("execution ids", () => {
  test("parse into name:number segments from root", () => {
    expect(parseExecutionId("root:1:review:4:split.legal:1")).toEqual([
      ["root", 1],
      ["review", 4],
      ["split.legal", 1],
    ]);
  });
  test.each(["", "root", "root:x", "lines:1", "root:1:lines", "root:0"])("%j does not parse", (id) => {
    expect(parseExecutionId(id)).toBeNull();
  });
  test("the parent drops the last segment", () => {
    expect([parentId("root:1:lines:2:split.a:1"), parentId("root:1:lines:2"), parentId("root:1")]).toEqual([
      "root:1:lines:2",
      "root:1",
      null,
    ]);
  });
  test("siblings order by number, numerically", () => {
    const ids = ["root:1:lines:10", "root:1:lines:9", "root:1:lines:2"];
    expect(ids.sort(compareIds)).toEqual(["root:1:lines:2", "root:1:lines:9", "root:1:lines:10"]);
  });
});

/** Each execution of a tree as [id, kind, title, status, reason, children]. */
function described(list: readonly ServerExecution[]) {
  const tree = buildExecutionTree(list);
  return [...tree.byId.values()].map((e) => [e.id, e.kind, executionTitle(e), e.status, e.reason, e.children]);
}

describe("the tree of a cancelled foreach, as the server sends it", () => {
  const tree = buildExecutionTree(BATCH_CANCELLED_EXECUTIONS);

  test("every execution keeps the server's status and reason: item 1 completed, items 2 and 3 cancelled", () => {
    expect(tree.root).toBe("root:1");
    expect(described(BATCH_CANCELLED_EXECUTIONS)).toEqual([
      ["root:1", "root", "run (root)", "cancelled", "Cancelled: cancelled by admin: duplicate batch", ["root:1:lines:1", "root:1:lines:2", "root:1:lines:3"]],
      ["root:1:lines:1", "item", "item 1", "completed", "Completed", []],
      ["root:1:lines:2", "item", "item 2", "cancelled", "Cancelled by admin", []],
      ["root:1:lines:3", "item", "item 3", "cancelled", "Cancelled by admin", []],
    ]);
  });

  test("each level counts its children by the server's statuses", () => {
    const [group] = childGroups(tree, "root:1");
    expect(group!.counts).toEqual({ completed: 1, cancelled: 2 });
    expect(groupSummary(group!)).toBe("items of lines: 1 completed, 2 cancelled");
  });

  test("rows list only what is expanded", () => {
    expect(visibleRows(tree, new Set()).map((row) => row.type)).toEqual(["execution"]);
    const groupKey = childGroups(tree, "root:1")[0]!.key;
    expect(visibleRows(tree, new Set(["root:1"])).map((row) => row.type)).toEqual(["execution", "group"]);
    const open = visibleRows(tree, new Set(["root:1", groupKey]));
    expect(open.map((row) => (row.type === "execution" ? row.id : row.key))).toEqual([
      "root:1",
      "root:1|item|lines",
      "root:1:lines:1",
      "root:1:lines:2",
      "root:1:lines:3",
    ]);
    expect(open.map((row) => row.depth)).toEqual([0, 1, 2, 2, 2]);
  });
});

test("branches, iterations and subflow calls read by kind, each group by its owner", () => {
  const list = [
    execution("root:1", null, { kind: "root", owner: "", label: "run", status: "failed" }),
    execution("root:1:deadline.decision:1", "root:1", { kind: "branch", owner: "deadline", label: "decision", status: "failed" }),
    execution("root:1:deadline.timer:1", "root:1", { kind: "branch", owner: "deadline", label: "timer", status: "cancelled" }),
    execution("root:1:poll:2", "root:1", { kind: "iteration", owner: "poll", status: "completed" }),
    execution("root:1:wrap:1", "root:1", { kind: "subflow", owner: "wrap", label: "wrap", status: "completed" }),
  ];
  const tree = buildExecutionTree(list);
  expect(tree.byId.get("root:1")!.children.map((id) => executionTitle(tree.byId.get(id)!))).toEqual([
    "branch decision",
    "branch timer",
    "iteration 2",
    "subflow wrap",
  ]);
  expect(childGroups(tree, "root:1").map(groupSummary)).toEqual([
    "branches of deadline: 1 failed, 1 cancelled",
    "iterations of poll: 1 completed",
    "subflow calls of wrap: 1 completed",
  ]);
});

test("siblings the server lists out of order are ordered by number: item 10 after item 9", () => {
  const tree = buildExecutionTree([
    execution("root:1", null, { kind: "root", owner: "", label: "run" }),
    execution("root:1:lines:10", "root:1"),
    execution("root:1:lines:9", "root:1"),
    execution("root:1:lines:2", "root:1"),
  ]);
  expect(tree.byId.get("root:1")!.children).toEqual(["root:1:lines:2", "root:1:lines:9", "root:1:lines:10"]);
});

test("an execution whose parent has not arrived stays out of the tree until it does", () => {
  const root = execution("root:1", null, { kind: "root", owner: "", label: "run" });
  const orphan = execution("root:1:lines:1:split.a:1", "root:1:lines:1", { kind: "branch", owner: "split", label: "a" });
  const before = buildExecutionTree([root, orphan]);
  expect(before.byId.get("root:1")!.children).toEqual([]);
  expect(visibleRows(before, new Set(["root:1"])).map((row) => row.type)).toEqual(["execution"]);
  const after = buildExecutionTree([root, orphan, execution("root:1:lines:1", "root:1")]);
  expect(after.byId.get("root:1:lines:1")!.children).toEqual(["root:1:lines:1:split.a:1"]);
});

describe("socket messages", () => {
  test("a message's executions are read as sent; entries not of the contract's shape are dropped", () => {
    const first = BATCH_CANCELLED_EXECUTIONS[0]!;
    expect(
      executionsOf({
        type: "snapshot",
        executions: [
          { ...first, extra: "ignored" },
          { ...first, id: "root:1:x:1", status: "purple" },
          { ...first, id: "root:1:y:1", kind: "execution" },
          { ...first, id: "root:1:z:1", reason: null },
          "root:1",
        ],
      }),
    ).toEqual([first]);
  });

  test("a snapshot or delta without executions carries none (null), an empty list carries no change", () => {
    expect(executionsOf({ type: "snapshot", status: "running" })).toBeNull();
    expect(executionsOf({ type: "delta", executions: "root:1" })).toBeNull();
    expect(executionsOf(null)).toBeNull();
    expect(executionsOf({ type: "delta", executions: [] })).toEqual([]);
  });

  test("a delta replaces each changed execution in place and adds the new ones; the old list is kept", () => {
    const waiting = [
      execution("root:1", null, { kind: "root", owner: "", label: "run", status: "waiting", reason: "waiting" }),
      execution("root:1:lines:1", "root:1", { status: "completed", reason: "completed" }),
      execution("root:1:lines:2", "root:1", { status: "waiting", reason: "waiting: for a decision or a timer" }),
    ];
    const copy = structuredClone(waiting);
    const changed = [
      execution("root:1:lines:2", "root:1", { status: "cancelled", reason: "cancelled: run cancelled by admin" }),
      execution("root:1:lines:3", "root:1", { status: "running", reason: "running" }),
    ];
    const merged = mergeExecutions(waiting, changed);
    expect(merged.map((e) => [e.id, e.status, e.reason])).toEqual([
      ["root:1", "waiting", "waiting"],
      ["root:1:lines:1", "completed", "completed"],
      ["root:1:lines:2", "cancelled", "cancelled: run cancelled by admin"],
      ["root:1:lines:3", "running", "running"],
    ]);
    expect(waiting).toEqual(copy);
    expect(mergeExecutions(waiting, [])).toBe(waiting);
    const tree = buildExecutionTree(merged);
    expect(groupSummary(childGroups(tree, "root:1")[0]!)).toBe("items of lines: 1 completed, 1 running, 1 cancelled");
  });

  test("a delta naming an execution twice keeps the later one", () => {
    const merged = mergeExecutions(
      [execution("root:1", null, { kind: "root" })],
      [execution("root:1:lines:1", "root:1", { status: "running" }), execution("root:1:lines:1", "root:1", { status: "failed" })],
    );
    expect(merged.map((e) => [e.id, e.status])).toEqual([
      ["root:1", "running"],
      ["root:1:lines:1", "failed"],
    ]);
  });
});

test("10,000 items build one group and a window of a few dozen rows", () => {
  const list = [execution("root:1", null, { kind: "root", owner: "", label: "run" })];
  for (let i = 1; i <= 10_000; i++) list.push(execution(`root:1:lines:${i}`, "root:1"));
  const tree = buildExecutionTree(list);
  const group = childGroups(tree, "root:1")[0]!;
  expect(groupSummary(group)).toBe("items of lines: 10000 running");
  const rows = visibleRows(tree, new Set(["root:1", group.key]));
  expect(rows.length).toBe(10_002);
  const [first, last] = windowRange(28 * 5000, 320, 28, rows.length);
  expect([first, last]).toEqual([4992, 5020]);
  expect(last - first).toBeLessThan(40);
});

test("the window never runs past either end", () => {
  expect(windowRange(0, 300, 30, 5)).toEqual([0, 5]);
  expect(windowRange(10_000, 300, 30, 0)).toEqual([0, 0]);
});
