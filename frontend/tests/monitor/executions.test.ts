import { describe, expect, test } from "vitest";
import {
  buildExecutionTree,
  childGroups,
  compareIds,
  executionTitle,
  groupSummary,
  parentId,
  parseExecutionId,
  visibleRows,
  windowRange,
} from "../../src/monitor/executions";
import type { TraceEvent } from "../../src/monitor/types";
import { FOREACH_WAITING, RACE_FAILED } from "./traces";

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

describe("the execution tree of a foreach with one item waiting", () => {
  const tree = buildExecutionTree(FOREACH_WAITING, "waiting");

  test("root holds the three items of lines, each with its status", () => {
    expect(tree.root).toBe("root:1");
    const root = tree.byId.get("root:1")!;
    expect(root.status).toBe("waiting");
    expect(root.children).toEqual(["root:1:lines:1", "root:1:lines:2", "root:1:lines:3"]);
    expect(root.children.map((id) => [tree.byId.get(id)!.kind, tree.byId.get(id)!.status])).toEqual([
      ["item", "completed"],
      ["item", "waiting"],
      ["item", "completed"],
    ]);
    expect(executionTitle(tree.byId.get("root:1:lines:2")!)).toBe("item 2");
  });

  test("each level counts its children by status", () => {
    const [group] = childGroups(tree, "root:1");
    expect(group!.counts).toEqual({ completed: 2, waiting: 1 });
    expect(groupSummary(group!)).toBe("items of lines: 2 completed, 1 waiting");
  });

  test("rows list only what is expanded", () => {
    expect(visibleRows(tree, new Set()).map((row) => row.type)).toEqual(["execution"]);
    const groupKey = childGroups(tree, "root:1")[0]!.key;
    expect(visibleRows(tree, new Set(["root:1"])).map((row) => row.type)).toEqual(["execution", "group"]);
    const open = visibleRows(tree, new Set(["root:1", groupKey]));
    expect(open.map((row) => (row.type === "execution" ? row.id : row.key))).toEqual([
      "root:1",
      groupKey,
      "root:1:lines:1",
      "root:1:lines:2",
      "root:1:lines:3",
    ]);
    expect(open.map((row) => row.depth)).toEqual([0, 1, 2, 2, 2]);
  });
});

test("a failed race: the failing branch is failed, the cancelled one cancelled", () => {
  const tree = buildExecutionTree(RACE_FAILED, "failed");
  const statuses = Object.fromEntries([...tree.byId.values()].map((e) => [e.id, [e.kind, e.owner, e.label, e.status]]));
  expect(statuses).toEqual({
    "root:1": ["root", "root", "1", "failed"],
    "root:1:deadline.decision:1": ["branch", "deadline", "decision", "failed"],
    "root:1:deadline.timer:1": ["branch", "deadline", "timer", "cancelled"],
  });
  expect(groupSummary(childGroups(tree, "root:1")[0]!)).toBe("branches of deadline: 1 failed, 1 cancelled");
});

test("10,000 items build one group and a window of a few dozen rows", () => {
  const events: TraceEvent[] = [{ seq: 0, event: "run.started", execution_id: "root:1", node: null, at: "2026-12-04T05:00:00Z", detail: {} }];
  for (let i = 1; i <= 10_000; i++) {
    events.push({ seq: i, event: "item.started", execution_id: `root:1:lines:${i}`, node: "lines", at: "2026-12-04T05:00:01Z", detail: {} });
  }
  const tree = buildExecutionTree(events, "running");
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
