import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Item } from "../../src/inbox/RequestList";
import type { ApprovalRequest, InboxConfig } from "../../src/inbox/types";

const NOW = Date.parse("2026-12-04T12:00:00Z");
const CONFIG: InboxConfig = {
  user: "finance", groups: ["finance"], admin: false, csrfToken: "t", api: "/api/approvals/",
  runUrl: "/runs/{id}/",
};
const HOSTILE = '<img src=x onerror="alert(1)">';

function request(over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    id: 7, run: "7b0c0b8e-1111-4000-8000-000000000000", flow: "invoice-sign-off", runtime: "durable",
    node: "fin", execution_id: "root:1", groups: ["finance"], policy: "all", title: `Pay ${HOSTILE}`,
    instructions: `Check ${HOSTILE}`, shown: [{ field: "input.vendor", value: HOSTILE }],
    status: "open", outcome: "", created_at: "2026-12-04T11:57:00Z", due_at: "2026-12-04T11:00:00Z",
    overdue: true, closed_at: null, assignee: null, delegations: [], may_decide: true, decisions: [],
    why_not: null, context: {
      started_by: "analyst", started_at: "2026-12-04T11:50:00Z", flow: "invoice-sign-off",
      flow_name: "Invoice sign-off", version: 2, input: null, input_more: 0,
    },
    ...over,
  };
}

function render(r: ApprovalRequest, tab: "open" | "archive" = "open"): string {
  return renderToStaticMarkup(
    <Item request={r} tab={tab} now={NOW} config={CONFIG} active selected={false}
      register={() => undefined} onFocus={() => undefined} onToggle={() => undefined} onDecide={() => undefined} />,
  );
}

describe("a request in the list", () => {
  it("renders people's text as text, never as markup", () => {
    const html = render(request());
    expect(html).not.toContain("<img");
    expect(html).toContain("Pay &lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(html).toContain("Check &lt;img");
  });

  it("says how long it waited, links its run and warns when overdue in words", () => {
    const html = render(request());
    expect(html).toContain('title="Asked 2026-12-04 11:57 UTC"');
    expect(html).toContain("waiting 3 min");
    expect(html).toContain('href="/runs/7b0c0b8e-1111-4000-8000-000000000000/"');
    expect(html).toContain("overdue by 1 hour");
    expect(html).toContain("request--overdue");
    expect(html).toContain('aria-label="Approve Pay &lt;img');
  });

  it("offers no decision to someone who may not decide it, and says the server's why", () => {
    const html = render(request({
      may_decide: false, why_not: { code: "approval.assigned", text: "Reassigned to legal; only they decide it." },
    }));
    expect(html).not.toContain("Approve…");
    expect(html).toContain('<p class="why-not muted" data-code="approval.assigned">Reassigned to legal; only they decide it.</p>');
  });

  it("tells the starter of the run why another member must decide, read-only", () => {
    const html = render(request({
      may_decide: false,
      why_not: { code: "approval.starter", text: "You started this run, so another finance member must decide" },
    }));
    expect(html).not.toContain("Approve…");
    expect(html).toContain('class="why-not why-not--starter"');
    expect(html).toContain("You started this run, so another finance member must decide</p>");
    expect(html).toMatch(/<input type="checkbox" disabled=""/);
  });

  it("says who started the run, when, and the flow version", () => {
    const html = render(request());
    expect(html).toContain('Started by <strong>analyst</strong> <time dateTime="2026-12-04T11:50:00Z" title="2026-12-04 11:50 UTC">10 min ago</time> · Invoice sign-off v2');
  });

  it("shows the run's input in short lines when the node shows nothing, with how many more", () => {
    const html = render(request({
      shown: [],
      context: {
        started_by: null, started_at: "2026-12-04T11:50:00Z", flow: null, flow_name: "a file",
        version: null, input: [{ field: "lines", text: "[1, 2, 3, … 7 more]" }], input_more: 2,
      },
    }));
    expect(html).toContain('<dl class="shown shown--input" aria-label="Run input"><div><dt>lines</dt><dd>[1, 2, 3, … 7 more]</dd></div>');
    expect(html).toContain("… 2 more fields");
    expect(html).toContain("Started by <strong>the command line</strong>");
    expect(html).toContain("10 min ago</time> · a file</span>");
  });

  it("shows in the archive who decided what, and the outcome", () => {
    const html = render(request({
      status: "closed", outcome: "approved", closed_at: "2026-12-04T11:59:00Z", overdue: false,
      decisions: [{ user: "finance", decision: "approve", comment: "ok", at: "2026-12-04T11:58:00Z" }],
    }), "archive");
    expect(html).toContain("Approved");
    expect(html).toContain("finance approved: ok");
    expect(html).not.toContain("Approve…");
  });
});
