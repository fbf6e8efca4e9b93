import { renderToStaticMarkup } from "react-dom/server";
import { expect, test } from "vitest";
import { parseGraph } from "../../src/graph";
import { RowDetails, Votes } from "../../src/monitor/InspectorParts";
import { Inspector } from "../../src/monitor/RunView";
import type { RunPicture, Vote } from "../../src/monitor/types";
import { invoiceSignoff } from "../fixtures/invoice-signoff";

const NOW = Date.parse("2026-12-04T05:10:20Z");
const DANA: Vote = { user: "dana", groups: ["finance"], decision: "approve", comment: "fine", at: "2026-12-04T05:07:19.981959+00:00" };
const EVE: Vote = { user: "eve", groups: ["finance", "audit"], decision: "reject", comment: '<img src=x onerror="alert(1)">', at: "2026-12-04T05:10:00Z" };

test("each vote shows its decision with the color's icon, the person and groups, the time and the comment as text", () => {
  const markup = renderToStaticMarkup(<Votes votes={[DANA, EVE]} now={NOW} />);
  expect(markup).toBe(
    "<h3>Decisions (2)</h3>" +
      '<ul class="votes" aria-label="Decisions">' +
      '<li class="vote"><div class="vote__head"><span class="status-pill braid-color--completed"><span aria-hidden="true">✓</span> Approved</span> ' +
      'by <strong class="vote__who">dana (finance)</strong> ' +
      '<time dateTime="2026-12-04T05:07:19.981959+00:00" title="2026-12-04 05:07:19 UTC">3 min ago</time></div>' +
      '<blockquote class="vote__comment">fine</blockquote></li>' +
      '<li class="vote"><div class="vote__head"><span class="status-pill braid-color--failed"><span aria-hidden="true">✕</span> Rejected</span> ' +
      'by <strong class="vote__who">eve (finance, audit)</strong> ' +
      '<time dateTime="2026-12-04T05:10:00Z" title="2026-12-04 05:10:00 UTC">20 s ago</time></div>' +
      '<blockquote class="vote__comment">&lt;img src=x onerror=&quot;alert(1)&quot;&gt;</blockquote></li>' +
      "</ul>",
  );
});

test("one vote is headed Decision, a vote without a comment says so, and no votes draw nothing", () => {
  const markup = renderToStaticMarkup(<Votes votes={[{ ...DANA, comment: "" }]} now={NOW} />);
  expect(markup).toContain("<h3>Decision</h3>");
  expect(markup).toContain('<p class="vote__comment vote__comment--none muted">No comment.</p>');
  expect(renderToStaticMarkup(<Votes votes={[]} now={NOW} />)).toBe("");
});

test("the row's details hold its execution id, attempt, last event and raw result, folded away", () => {
  const markup = renderToStaticMarkup(
    <RowDetails
      row={{ status: "completed", execution_id: "root:1:split.finance:1", result: "approved", attempt: 1 }}
      last={{ seq: 9, event: "resumed", execution_id: "root:1:split.finance:1", node: "fin", at: "2026-12-04T05:07:20Z", detail: {} }}
      now={NOW}
    />,
  );
  expect(markup).toBe(
    '<details class="row-details"><summary>Details</summary><dl>' +
      "<dt>Execution</dt><dd><code>root:1:split.finance:1</code></dd>" +
      "<dt>Attempt</dt><dd>1</dd>" +
      '<dt>Last event</dt><dd>resumed <time dateTime="2026-12-04T05:07:20Z" title="2026-12-04 05:07:20 UTC">3 min ago</time></dd>' +
      "</dl><h3>Result</h3><pre>approved</pre></details>",
  );
});

function inspect(picture: RunPicture, node: string): string {
  return renderToStaticMarkup(
    <Inspector
      doc={parseGraph(invoiceSignoff)}
      graphs={{}}
      runId="17b161d6-e3cd-4249-a2e0-e94994938592"
      groups={["finance"]}
      node={node}
      picture={picture}
      shown={{ colors: picture.colors, reasons: picture.reasons }}
      viewing={null}
      events={[]}
      now={NOW}
      onClose={() => undefined}
      onSelect={() => undefined}
    />,
  );
}

test("the inspector of a decided approval says why in words with code, then who decided, then the details", () => {
  const picture: RunPicture = {
    status: "waiting",
    nodes: { fin: { status: "completed", execution_id: "root:1:split.finance:1", result: "approved", attempt: 1 } },
    colors: { fin: "completed", both: "pending" },
    reasons: { fin: 'Approved by finance (dana): "fine"', both: "Pending: `leg` is waiting" },
    decisions: { fin: [DANA] },
  };
  const markup = inspect(picture, "fin");
  expect(markup).toContain('<dt>Why</dt><dd>Approved by finance (dana): &quot;fine&quot;</dd>');
  const why = markup.indexOf("<dt>Why</dt>");
  const votes = markup.indexOf('<ul class="votes"');
  const details = markup.indexOf('<details class="row-details">');
  expect([why < votes, votes < details]).toEqual([true, true]);
  expect(markup).toContain('by <strong class="vote__who">dana (finance)</strong>');
  // The execution id is in the details only, no longer beside the row's status.
  expect(markup.split("root:1:split.finance:1").length - 1).toBe(1);
  expect(markup.indexOf("root:1:split.finance:1")).toBeGreaterThan(details);
  expect(inspect(picture, "both")).toContain("<dt>Why</dt><dd>Pending: <code>leg</code> is waiting</dd>");
});

test("an approval waiting again shows no votes of its earlier round", () => {
  const picture: RunPicture = {
    status: "waiting",
    nodes: { fin: { status: "waiting", execution_id: "root:1:split.finance:1", result: null, attempt: 1 } },
    colors: { fin: "waiting" },
    reasons: { fin: "Waiting for a decision by finance" },
    decisions: { fin: [DANA] },
  };
  expect(inspect(picture, "fin")).not.toContain("votes");
});
