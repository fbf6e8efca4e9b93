import { renderToStaticMarkup } from "react-dom/server";
import { expect, test } from "vitest";
import { StateWritesView, type WritesState, writesVersion } from "../../src/monitor/StateWrites";

const render = (state: WritesState, node = "done") =>
  renderToStaticMarkup(<StateWritesView state={state} node={node} onSelect={() => undefined} />);

test("the writes are a table of field, value, writer (a button to inspect it) and via", () => {
  const markup = render({
    kind: "ready",
    data: {
      node: "done",
      execution_id: "root:1",
      writes: [
        { seq: 12, node: "set_total", execution_id: "root:1", field: "total", value: 42, via: null },
        { seq: 15, node: "b", execution_id: "root:1:split.left:1", field: "log", value: '["b"]', via: "gather `join` (slot b)" },
        { seq: 18, node: "done", execution_id: "root:1", field: "note", value: "<b>hi</b>", via: null },
      ],
    },
  });
  expect(markup).toContain("<h3>State writes</h3>");
  expect(markup).toContain('<th scope="col">Field</th><th scope="col">Value</th><th scope="col">Written by</th><th scope="col">Via</th>');
  expect(markup).toContain(
    '<tr><td><code>total</code></td><td class="writes-table__value"><code>42</code></td><td title="root:1, trace event #12"><button type="button" class="link" aria-label="Inspect set_total"><code>set_total</code></button></td><td><span class="muted">own path</span></td></tr>',
  );
  expect(markup).toContain("<code>[&quot;b&quot;]</code>");
  expect(markup).toContain("<td>gather `join` (slot b)</td>");
  // The node's own write names it without a link to itself; user text stays text.
  expect(markup).toContain('<td title="root:1, trace event #18"><code>done</code></td>');
  expect(markup).toContain("<code>&lt;b&gt;hi&lt;/b&gt;</code>");
  expect(markup.match(/<button/g)).toHaveLength(2);
});

test("each other state says what it is", () => {
  expect(render({ kind: "ready", data: { node: "done", execution_id: "root:1", writes: [] } })).toContain(
    '<p class="muted">No state writes reach this node.</p>',
  );
  expect(render({ kind: "loading" })).toContain('<p class="muted" role="status">Loading the state writes…</p>');
  expect(render({ kind: "error", message: "no node 'x' has run in this run" })).toContain(
    '<p class="error" role="alert">Could not load the state writes: no node &#x27;x&#x27; has run in this run. They reload when the run next changes.</p>',
  );
  expect(render({ kind: "not-run" })).toContain("This node has not run yet: no lineage, so no state writes to show.");
});

test("a finished node's writes follow its row; a running one's follow every change of the run", () => {
  const picture = { status: "running" };
  expect(writesVersion(undefined, picture)).toBe(picture);
  expect(writesVersion({ status: "running", execution_id: "root:1", result: null }, picture)).toBe(picture);
  expect(writesVersion({ status: "waiting", execution_id: "root:1", result: null }, picture)).toBe(picture);
  expect(writesVersion({ status: "completed", execution_id: "root:1:review:3", result: null, attempt: 2 }, picture)).toBe(
    "root:1:review:3|2|completed",
  );
  expect(writesVersion({ status: "failed", execution_id: "root:1", result: null }, picture)).toBe("root:1|1|failed");
});
