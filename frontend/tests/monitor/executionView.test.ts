import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import {
  type ExecutionView,
  ExecutionViewFollower,
  ExecutionViewFormatError,
  executionViewUrl,
  parseExecutionView,
  type ViewResult,
} from "../../src/monitor/executionView";
import { nextChosenView } from "../../src/monitor/RunView";
import { ITEM_1_VIEW } from "./server";

describe("reading one execution's view", () => {
  test("the server's colors and reasons are taken as they are", () => {
    expect(parseExecutionView(ITEM_1_VIEW)).toEqual({
      execution: "root:1:lines:1",
      colors: ITEM_1_VIEW.colors,
      reasons: ITEM_1_VIEW.reasons,
    });
  });

  test("an answer out of step with the contract is refused with what is off", () => {
    expect(() => parseExecutionView({ execution: "root:1", colors: {} })).toThrow(
      new ExecutionViewFormatError("The execution's answer lacks execution, colors or reasons."),
    );
    expect(() => parseExecutionView({ ...ITEM_1_VIEW, colors: { start: "green" } })).toThrow(
      new ExecutionViewFormatError("The color of start is not one of the seven: green."),
    );
  });

  test("the execution id is one escaped query value", () => {
    expect(executionViewUrl("r-1", "root:1:split.a:1")).toBe("/api/runs/r-1/execution/?id=root%3A1%3Asplit.a%3A1");
  });
});

const viewOf = (execution: string, color: "completed" | "cancelled" = "completed"): ExecutionView => ({
  execution,
  colors: { start: color },
  reasons: { start: `${color} in execution ${execution}` },
});

function deferredLoads() {
  const pending: { execution: string; resolve: (view: ExecutionView) => void; reject: (error: unknown) => void }[] = [];
  const load = (execution: string) =>
    new Promise<ExecutionView>((resolve, reject) => {
      pending.push({ execution, resolve, reject });
    });
  return { pending, load };
}

describe("following the chosen execution while the run changes", () => {
  // Fake timers fake Date.now too: the follower's clock moves with them.
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => vi.useRealTimers());
  const tick = (ms: number) => vi.advanceTimersByTimeAsync(ms);

  test("choosing asks at once; changes ask again at most once a second, and the last change is never lost", async () => {
    const { pending, load } = deferredLoads();
    const shown: [string, ViewResult][] = [];
    const follower = new ExecutionViewFollower(load, (e, r) => shown.push([e, r]), 1000);
    follower.refresh("root:1:lines:1");
    expect(pending.map((p) => p.execution)).toEqual(["root:1:lines:1"]);
    pending[0]!.resolve(viewOf("root:1:lines:1"));
    await tick(100);
    expect(shown).toEqual([["root:1:lines:1", { view: viewOf("root:1:lines:1") }]]);
    // Five changes within the second: one request, a second after the first.
    for (let i = 0; i < 5; i++) follower.refresh("root:1:lines:1");
    await tick(800);
    expect(pending).toHaveLength(1);
    await tick(100);
    expect(pending).toHaveLength(2);
    // A change during that request: one more, a second after it started.
    follower.refresh("root:1:lines:1");
    pending[1]!.resolve(viewOf("root:1:lines:1", "cancelled"));
    await tick(500);
    expect(pending).toHaveLength(2);
    await tick(500);
    expect(pending).toHaveLength(3);
    expect(shown.map(([, r]) => ("view" in r ? r.view.colors.start : "error"))).toEqual(["completed", "cancelled"]);
  });

  test("choosing another execution asks for it at once and drops the answer for the one before", async () => {
    const { pending, load } = deferredLoads();
    const shown: [string, ViewResult][] = [];
    const follower = new ExecutionViewFollower(load, (e, r) => shown.push([e, r]), 1000);
    follower.refresh("root:1:lines:1");
    follower.refresh("root:1:lines:2");
    pending[0]!.resolve(viewOf("root:1:lines:1"));
    await tick(1);
    expect(shown).toEqual([]);
    expect(pending.map((p) => p.execution)).toEqual(["root:1:lines:1", "root:1:lines:2"]);
    pending[1]!.resolve(viewOf("root:1:lines:2"));
    await tick(1);
    expect(shown).toEqual([["root:1:lines:2", { view: viewOf("root:1:lines:2") }]]);
    // A booked refresh for item 2 is dropped when item 3 is chosen: item 3 is asked at once.
    follower.refresh("root:1:lines:2");
    follower.refresh("root:1:lines:3");
    expect(pending.map((p) => p.execution)).toEqual(["root:1:lines:1", "root:1:lines:2", "root:1:lines:3"]);
    await tick(2000);
    expect(pending).toHaveLength(3);
  });

  test("a failure is shown as an error; back to live and a stopped follower ask nothing more", async () => {
    const { pending, load } = deferredLoads();
    const shown: [string, ViewResult][] = [];
    const follower = new ExecutionViewFollower(load, (e, r) => shown.push([e, r]), 1000);
    follower.refresh("root:1:lines:9");
    pending[0]!.reject(new Error("this run has no execution 'root:1:lines:9'"));
    await tick(1);
    expect(shown).toEqual([["root:1:lines:9", { error: new Error("this run has no execution 'root:1:lines:9'") }]]);
    follower.refresh(null);
    await tick(2000);
    expect(pending).toHaveLength(1);
    follower.refresh("root:1");
    follower.refresh("root:1");
    follower.stop();
    pending[1]!.resolve(viewOf("root:1"));
    await tick(2000);
    expect(pending).toHaveLength(2);
    expect(shown).toHaveLength(1);
  });
});

describe("the chosen view's state", () => {
  test("an answer replaces the view; a failure keeps the last view of the same execution with its error", () => {
    const first = nextChosenView(null, "root:1:lines:1", { view: viewOf("root:1:lines:1") });
    expect(first).toEqual({ execution: "root:1:lines:1", view: viewOf("root:1:lines:1"), error: "" });
    expect(nextChosenView(first, "root:1:lines:1", { error: new Error("The server could not be reached.") })).toEqual({
      execution: "root:1:lines:1",
      view: viewOf("root:1:lines:1"),
      error: "The server could not be reached.",
    });
  });

  test("a failure for another execution shows no colors of the one before", () => {
    const first = nextChosenView(null, "root:1:lines:1", { view: viewOf("root:1:lines:1") });
    expect(nextChosenView(first, "root:1:lines:2", { error: "offline" })).toEqual({
      execution: "root:1:lines:2",
      view: null,
      error: "offline",
    });
  });
});
