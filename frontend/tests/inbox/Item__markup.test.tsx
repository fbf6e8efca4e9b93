import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Item } from "../../src/inbox/Inbox";
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

  it("offers no decision to someone who may not decide it", () => {
    const html = render(request({ may_decide: false }));
    expect(html).not.toContain("Approve…");
    expect(html).toContain("You may not decide this one");
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
