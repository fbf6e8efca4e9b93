import { afterEach, describe, expect, test, vi } from "vitest";
import { ApiError } from "../../src/monitor/api";
import {
  fetchWrites,
  type NodeWrites,
  parseWrites,
  valueText,
  WritesFollower,
  WritesFormatError,
  writesUrl,
} from "../../src/monitor/writes";

const RUN = "17b161d6-e3cd-4249-a2e0-e94994938592";
const ANSWER = {
  node: "done",
  execution_id: "root:1",
  writes: [
    { seq: 12, node: "set_total", execution_id: "root:1", field: "total", value: 42, via: null },
    { seq: 15, node: "b", execution_id: "root:1:split.left:1", field: "log", value: '["b"]', via: "gather `join` (slot b)" },
  ],
};

function answering(status: number, body: unknown) {
  const fetch = vi.fn(async (_url: string, _init?: RequestInit) => new Response(JSON.stringify(body), { status }));
  vi.stubGlobal("fetch", fetch);
  return fetch;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("fetching a node's writes", () => {
  test("asks for the node's path with its slashes escaped and returns the writes", async () => {
    const fetch = answering(200, ANSWER);
    await expect(fetchWrites(RUN, "wrap/assess/score")).resolves.toEqual(ANSWER);
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(fetch.mock.calls[0]![0]).toBe(`/api/runs/${RUN}/writes/?node=wrap%2Fassess%2Fscore`);
    expect(fetch.mock.calls[0]![1]).toMatchObject({ method: "GET", credentials: "same-origin" });
  });

  test("a 400 rejects with the server's detail", async () => {
    answering(400, { code: "run.node", detail: "no node 'd' has run in this run" });
    const refusal = fetchWrites(RUN, "d");
    await expect(refusal).rejects.toBeInstanceOf(ApiError);
    await expect(fetchWrites(RUN, "d")).rejects.toThrow("no node 'd' has run in this run");
  });

  test("a 404 for an unknown run rejects with its detail", async () => {
    answering(404, { detail: "No Run matches the given query." });
    await expect(fetchWrites(RUN, "done")).rejects.toMatchObject({ status: 404, message: "No Run matches the given query." });
  });

  test("an answer of another shape is refused, naming what is off", async () => {
    answering(200, { node: "done", execution_id: "root:1", writes: [{ seq: 1, node: "x" }] });
    await expect(fetchWrites(RUN, "done")).rejects.toThrow(new WritesFormatError("Write 1 of the answer is not a write."));
    expect(() => parseWrites({ node: "done" })).toThrow("The writes answer lacks node, execution_id or writes.");
    expect(() => parseWrites(null)).toThrow("The writes answer is not an object.");
  });

  test("the URL escapes the run id and the path", () => {
    expect(writesUrl("r 1", "a/b c")).toBe("/api/runs/r%201/writes/?node=a%2Fb%20c");
  });
});

test("values read as text: strings as they are, the rest as JSON", () => {
  expect([valueText(42), valueText('["b"]'), valueText("ok"), valueText(null), valueText(true), valueText({ a: 1 })]).toEqual([
    "42",
    '["b"]',
    "ok",
    "null",
    "true",
    '{"a":1}',
  ]);
});

/** A load whose answers the test releases one at a time. */
function deferredLoads() {
  const pending: { node: string; resolve: (value: NodeWrites) => void; reject: (error: unknown) => void }[] = [];
  const load = (node: string) =>
    new Promise<NodeWrites>((resolve, reject) => {
      pending.push({ node, resolve, reject });
    });
  return { pending, load };
}

const writesOf = (node: string, count: number): NodeWrites => ({
  node,
  execution_id: "root:1",
  writes: Array.from({ length: count }, (_, i) => ({ seq: i, node, execution_id: "root:1", field: "f", value: i, via: null })),
});

const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("following a node's writes while the run changes", () => {
  test("changes during a request ask for exactly one more request after it, whose answer is shown", async () => {
    const { pending, load } = deferredLoads();
    const shown: [string, unknown][] = [];
    const follower = new WritesFollower(load, (node, result) => shown.push([node, result]));
    follower.refresh("done");
    follower.refresh("done");
    follower.refresh("done");
    expect(pending.map((p) => p.node)).toEqual(["done"]);
    pending[0]!.resolve(writesOf("done", 1));
    await settle();
    expect(pending.map((p) => p.node)).toEqual(["done", "done"]);
    pending[1]!.resolve(writesOf("done", 2));
    await settle();
    expect(pending).toHaveLength(2);
    expect(shown).toEqual([
      ["done", { writes: writesOf("done", 1) }],
      ["done", { writes: writesOf("done", 2) }],
    ]);
  });

  test("an answer for a node no longer shown is dropped, and the new node is asked for", async () => {
    const { pending, load } = deferredLoads();
    const shown: [string, unknown][] = [];
    const follower = new WritesFollower(load, (node, result) => shown.push([node, result]));
    follower.refresh("a");
    follower.refresh("b");
    pending[0]!.resolve(writesOf("a", 3));
    await settle();
    expect(shown).toEqual([]);
    expect(pending.map((p) => p.node)).toEqual(["a", "b"]);
    pending[1]!.resolve(writesOf("b", 1));
    await settle();
    expect(shown).toEqual([["b", { writes: writesOf("b", 1) }]]);
  });

  test("a failure is shown as an error, and a stopped follower shows nothing", async () => {
    const { pending, load } = deferredLoads();
    const shown: [string, unknown][] = [];
    const follower = new WritesFollower(load, (node, result) => shown.push([node, result]));
    follower.refresh("a");
    pending[0]!.reject(new Error("offline"));
    await settle();
    expect(shown).toEqual([["a", { error: new Error("offline") }]]);
    follower.refresh("a");
    follower.stop();
    pending[1]!.resolve(writesOf("a", 1));
    await settle();
    expect(shown).toHaveLength(1);
  });
});

test("a trailing request waits the gap after the one before it", async () => {
  const { pending, load } = deferredLoads();
  const follower = new WritesFollower(load, () => undefined, 60);
  follower.refresh("a");
  follower.refresh("a");
  pending[0]!.resolve(writesOf("a", 1));
  await settle();
  follower.refresh("a"); // joins the booked request
  expect(pending).toHaveLength(1);
  await new Promise((resolve) => setTimeout(resolve, 80));
  expect(pending.map((p) => p.node)).toEqual(["a", "a"]);
});
