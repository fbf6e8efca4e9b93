import { renderToStaticMarkup } from "react-dom/server";
import { expect, test } from "vitest";
import { FlowView } from "../../src/FlowView";
import { parseGraph, toFlow } from "../../src/graph";
import { buildExecutionTree } from "../../src/monitor/executions";
import { ExecutionTreePanel, executionTooltip } from "../../src/monitor/ExecutionTreePanel";
import { type ChosenView, RunView, type RunViewData, ViewMode } from "../../src/monitor/RunView";
import { RunsPage } from "../../src/monitor/RunsPage";
import { BATCH_CANCELLED_EXECUTIONS, execution } from "../monitor/server";

const GRAPH = {
  format: "braid.graph/1",
  name: "IF",
  nodes: [
    { id: "start", type: "start" },
    { id: "check", type: "if", condition: "input.ok" },
    { id: "yes", type: "set", values: {} },
    { id: "no", type: "set", values: {} },
    { id: "done", type: "end" },
  ],
  edges: [
    { source: "start", target: "check" },
    { source: "check", outcome: "true", target: "yes" },
    { source: "check", outcome: "false", target: "no" },
    { source: "yes", target: "done" },
    { source: "no", target: "done" },
  ],
};

test("a node with a reason shows it as a tooltip, describes itself by it and says it in its label", () => {
  const markup = renderToStaticMarkup(
    <FlowView
      doc={parseGraph(GRAPH)}
      colors={{ start: "completed", check: "completed", yes: "completed", no: "skipped", done: "running" }}
      reasons={{ no: "skipped: `check` took `true`" }}
    />,
  );
  expect(markup).toContain('aria-describedby="braid-reason-no"');
  expect(markup).toContain(
    '<span id="braid-reason-no" role="tooltip" class="braid-node__reason">skipped: <code>check</code> took <code>true</code></span>',
  );
  // The label and the native tooltip are plain words: no backticks to read aloud.
  expect(markup).toMatch(/aria-label="no: set · \?, skipped: check took true"/);
  expect(markup).toContain('title="no\nset · ?\nskipped: check took true"');
  expect(markup).toContain("braid-color--skipped");
});

test("a reason's text is never markup: a comment that looks like HTML is escaped, in code and out", () => {
  const markup = renderToStaticMarkup(
    <FlowView
      doc={parseGraph(GRAPH)}
      colors={{ no: "completed" }}
      reasons={{ no: 'Rejected by finance (eve): "<img src=x onerror=alert(1)>" at `<b>no</b>`' }}
    />,
  );
  expect(markup).toContain(
    '<span id="braid-reason-no" role="tooltip" class="braid-node__reason">' +
      "Rejected by finance (eve): &quot;&lt;img src=x onerror=alert(1)&gt;&quot; at <code>&lt;b&gt;no&lt;/b&gt;</code></span>",
  );
  expect(markup).not.toContain("<img");
  expect(markup).not.toContain("<b>");
});

test("edges between taken nodes are drawn taken, the rest faded", () => {
  const { edges } = toFlow(parseGraph(GRAPH), {
    start: "completed",
    check: "completed",
    yes: "completed",
    no: "skipped",
    done: "running",
  });
  expect(edges.map((edge) => [edge.source, edge.target, edge.className])).toEqual([
    ["start", "check", "braid-edge--taken"],
    ["check", "yes", "braid-edge--taken"],
    ["check", "no", "braid-edge--untaken"],
    ["yes", "done", "braid-edge--taken"],
    ["no", "done", "braid-edge--untaken"],
  ]);
  expect(toFlow(parseGraph(GRAPH)).edges.map((edge) => edge.className)).toEqual([
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
});

const RUN: RunViewData = {
  viewer: { username: "admin", groups: ["admins"], can_start: true, can_administer: true },
  run: {
    id: "17b161d6-e3cd-4249-a2e0-e94994938592",
    label: "IF v1",
    status: "running",
    flow: "if",
    version: 1,
    started_by: "admin",
    created_at: "2026-12-04T05:00:00Z",
    error: "",
  },
  graph: GRAPH,
};

test("the run view starts with the legend of seven colors, the graph, the panels and the admin actions", () => {
  const markup = renderToStaticMarkup(<RunView data={RUN} />);
  for (const color of ["pending", "running", "waiting", "completed", "failed", "skipped", "cancelled"]) {
    expect(markup).toContain(`braid-legend__item braid-color--${color}`);
  }
  expect(markup).toContain('aria-label="Flow graph: IF"');
  expect(markup).toContain("Executions");
  expect(markup).toContain("Timeline");
  // Nothing is guessed before the server answers: the tree and the timeline say they are loading.
  expect(markup).toContain("Loading the executions…");
  expect(markup).toContain("Loading the timeline…");
  expect(markup).not.toContain("No node has run yet.");
  expect(markup).toContain("Cancel run");
  expect(markup).toContain(">Retry<");
  expect(markup).toContain("connecting");
});

test("the run view offers no admin actions to someone who may not administer runs", () => {
  const markup = renderToStaticMarkup(<RunView data={{ ...RUN, viewer: { ...RUN.viewer, can_administer: false } }} />);
  expect(markup).not.toContain("Cancel run");
});

test("the run view of a graph it cannot draw says why", () => {
  const markup = renderToStaticMarkup(<RunView data={{ ...RUN, graph: { format: "other" } }} />);
  expect(markup).toContain("Cannot show this flow.");
});

test("the runs page opens the start form when asked to start a flow", () => {
  const markup = renderToStaticMarkup(
    <RunsPage
      data={{
        viewer: RUN.viewer,
        flows: [{ slug: "if", name: "IF", version: 1, input: { type: "object", properties: { ok: { type: "boolean" } } } }],
        start: "if",
      }}
    />,
  );
  expect(markup).toContain('aria-label="Start a run"');
  expect(markup).toContain('type="checkbox"/><label for="_R_2_-in-ok" class="form-field__label">ok</label>');
  expect(markup).toContain("Loading runs…");
});

test("an execution tree of 10,000 items mounts a window of rows, not 10,000", () => {
  const list = [execution("root:1", null, { kind: "root", owner: "", label: "run" })];
  for (let i = 1; i <= 10_000; i++) list.push(execution(`root:1:lines:${i}`, "root:1"));
  const tree = buildExecutionTree(list);
  const markup = renderToStaticMarkup(<ExecutionTreePanel tree={tree} chosen={null} onChoose={() => undefined} autoOpen={20_000} />);
  expect(markup).toContain("items of lines: 10000 running");
  const rows = (markup.match(/role="listitem"/g) ?? []).length;
  expect(markup).toContain('data-total="10002"');
  expect(markup).toContain("item 1 ");
  expect(markup).not.toContain("item 100 ");
  expect(rows).toBeGreaterThan(10);
  expect(rows).toBeLessThan(30);
});

test("each tree row shows the server's status and carries its reason in the tooltip", () => {
  const tree = buildExecutionTree(BATCH_CANCELLED_EXECUTIONS);
  const markup = renderToStaticMarkup(<ExecutionTreePanel tree={tree} chosen="root:1:lines:1" onChoose={() => undefined} />);
  const rows = [...markup.matchAll(/<button type="button" class="tree-row" aria-current="(\w+)" title="([^"]*)" data-execution="([^"]*)" data-status="(\w+)">/g)];
  expect(rows.map((m) => [m[3], m[4], m[2], m[1]])).toEqual([
    ["root:1", "cancelled", "root:1 — Cancelled: cancelled by admin: duplicate batch", "false"],
    ["root:1:lines:1", "completed", "root:1:lines:1 — Completed", "true"],
    ["root:1:lines:2", "cancelled", "root:1:lines:2 — Cancelled by admin", "false"],
    ["root:1:lines:3", "cancelled", "root:1:lines:3 — Cancelled by admin", "false"],
  ]);
  expect(markup).toContain("items of lines: 1 completed, 2 cancelled");
});

test("the tree says when it is loading, when the run has none yet, and why it could not load", () => {
  const empty = buildExecutionTree([]);
  const panel = (props: { ready: boolean; error?: string }) =>
    renderToStaticMarkup(<ExecutionTreePanel tree={empty} chosen={null} onChoose={() => undefined} {...props} />);
  expect(panel({ ready: false })).toContain("Loading the executions…");
  expect(panel({ ready: true })).toContain("No executions yet: the tree appears once the run has started.");
  expect(panel({ ready: true, error: "Could not load the executions: The server answered 500." })).toContain(
    '<p class="error" role="alert">Could not load the executions: The server answered 500. The tree below may be out of date; reload the page to try again.</p>',
  );
});

test("a chosen execution reads as loading, then failed in place, then with its status and why", () => {
  const tree = buildExecutionTree(BATCH_CANCELLED_EXECUTIONS);
  const item = tree.byId.get("root:1:lines:2")!;
  const mode = (state: ChosenView) =>
    renderToStaticMarkup(<ViewMode chosen={item.id} execution={item} state={state} onLive={() => undefined} onRetry={() => undefined} />);
  const loading = mode({ execution: item.id, view: null, error: "" });
  expect(loading).toContain('role="status" aria-busy="true"');
  expect(loading).toContain("Loading the colors of execution <code>root:1:lines:2</code> (item 2)…");
  const failed = mode({ execution: item.id, view: null, error: "this run has no execution 'root:1:lines:2'" });
  expect(failed).toContain('<p class="view-mode error" role="alert">');
  expect(failed).toContain("(item 2): this run has no execution &#x27;root:1:lines:2&#x27;. The graph is shown uncolored.");
  expect(failed).toContain(">Try again</button>");
  const ready = mode({ execution: item.id, view: { execution: item.id, colors: {}, reasons: {} }, error: "" });
  expect(ready).toContain("braid-color--cancelled");
  expect(ready).toContain('<span class="view-mode__reason"> Cancelled by admin</span>');
  const root = tree.byId.get("root:1")!;
  const prefixed = renderToStaticMarkup(
    <ViewMode chosen={root.id} execution={root} state={{ execution: root.id, view: { execution: root.id, colors: {}, reasons: {} }, error: "" }} onLive={() => undefined} onRetry={() => undefined} />,
  );
  expect(prefixed).toContain('<span class="view-mode__reason"> cancelled by admin: duplicate batch</span>');
  const done = tree.byId.get("root:1:lines:1")!;
  const plain = renderToStaticMarkup(
    <ViewMode chosen={done.id} execution={done} state={{ execution: done.id, view: { execution: done.id, colors: {}, reasons: {} }, error: "" }} onLive={() => undefined} onRetry={() => undefined} />,
  );
  expect(plain).toContain("braid-color--completed");
  expect(plain).not.toContain("view-mode__reason");
  expect(ready).not.toContain("Loading");
});

test("an execution's reason shows its node ids as code beside its status, and as plain words in its tooltip", () => {
  const tree = buildExecutionTree([
    execution("root:1", null, { kind: "root", owner: "", label: "run", status: "failed", reason: "Failed" }),
    execution("root:1:lines:1", "root:1", { status: "cancelled", reason: "Cancelled: `boom` failed while running" }),
  ]);
  const item = tree.byId.get("root:1:lines:1")!;
  const view = { execution: item.id, view: { execution: item.id, colors: {}, reasons: {} }, error: "" };
  const markup = renderToStaticMarkup(
    <ViewMode chosen={item.id} execution={item} state={view} onLive={() => undefined} onRetry={() => undefined} />,
  );
  expect(markup).toContain('<span class="view-mode__reason"> <code>boom</code> failed while running</span>');
  expect(executionTooltip(item)).toBe("root:1:lines:1 — Cancelled: boom failed while running");
});

test("the run view draws a subflow's child graph inside it, with a button to hide its steps", () => {
  const main = {
    format: "braid.graph/1",
    name: "Pay",
    nodes: [
      { id: "start", type: "start" },
      { id: "assess", type: "subflow", flow: "risk" },
      { id: "done", type: "end" },
    ],
    edges: [
      { source: "start", target: "assess" },
      { source: "assess", target: "done" },
    ],
  };
  const risk = {
    format: "braid.graph/1",
    name: "Risk",
    nodes: [
      { id: "start", type: "start" },
      { id: "score", type: "set", values: { score: "1" } },
      { id: "done", type: "end" },
    ],
    edges: [
      { source: "start", target: "score" },
      { source: "score", target: "done" },
    ],
  };
  const markup = renderToStaticMarkup(<RunView data={{ ...RUN, graph: main, graphs: { main, "risk@latest": risk } }} />);
  expect(markup).toContain('data-id="assess/score"');
  expect(markup).toContain('aria-label="Hide the 3 steps of subflow assess"');
  expect(markup).toContain("braid-node--expanded");
  expect(markup).toContain("A subflow&#x27;s steps are drawn inside it");
  const plain = renderToStaticMarkup(<RunView data={{ ...RUN, graph: main }} />);
  expect(plain).not.toContain('data-id="assess/score"');
  expect(plain).not.toContain("Hide the 3 steps");
});
