import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { WhyNotHere } from "../../src/monitor/InspectorParts";

describe("the inspector's reason a viewer may not decide", () => {
  it("shows the server's segregation-of-duties sentence to the run's starter, marked", () => {
    const html = renderToStaticMarkup(
      <WhyNotHere why={{ code: "approval.starter", text: "You started this run, so another finance member must decide" }}
        groups={["finance"]} viewer={["finance"]} />,
    );
    expect(html).toMatch(/^<p class="why-not why-not--starter" data-code="approval.starter"><svg class="icon"/);
    expect(html).toContain("</svg>You started this run, so another finance member must decide</p>");
  });

  it("shows another reason plainly", () => {
    const html = renderToStaticMarkup(
      <WhyNotHere why={{ code: "approval.assigned", text: "Reassigned to legal; only they decide it." }}
        groups={["finance"]} viewer={["finance"]} />,
    );
    expect(html).toBe('<p class="muted" data-code="approval.assigned">Reassigned to legal; only they decide it.</p>');
  });

  it("says whom it waits on without a server reason", () => {
    const outside = renderToStaticMarkup(<WhyNotHere why={null} groups={["finance", "legal"]} viewer={["analysts"]} />);
    expect(outside).toBe('<p class="muted">Waiting on finance, legal; you are in none of these groups.</p>');
    const inside = renderToStaticMarkup(<WhyNotHere why={null} groups={["finance"]} viewer={["finance"]} />);
    expect(inside).toBe('<p class="muted">Waiting on finance.</p>');
  });
});
