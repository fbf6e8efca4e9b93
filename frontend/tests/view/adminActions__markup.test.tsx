import { renderToStaticMarkup } from "react-dom/server";
import { expect, test } from "vitest";
import { AdminActions } from "../../src/monitor/AdminActions";

const RUN = "0a1b2c3d-0000-4000-8000-000000000000";

test("on a waiting run Cancel is open and Retry is disabled but focusable, with why in a tooltip and on the page", () => {
  const markup = renderToStaticMarkup(<AdminActions runId={RUN} status="waiting" />);
  expect(markup).toContain('<button type="button" class="danger" aria-disabled="false">Cancel run…</button>');
  expect(markup).toContain(
    '<button type="button" class="secondary" aria-disabled="true" title="Only a failed run can be retried; this one is waiting." aria-describedby="admin-actions-why">Retry</button>',
  );
  expect(markup).toContain('<p id="admin-actions-why" class="muted admin-actions__why">Only a failed run can be retried; this one is waiting.</p>');
  expect(markup).not.toContain("disabled=\"\"");
});

test("on a failed run Retry is open and Cancel says there is nothing left to cancel", () => {
  const markup = renderToStaticMarkup(<AdminActions runId={RUN} status="failed" />);
  expect(markup).toContain(
    '<button type="button" class="danger" aria-disabled="true" title="The run failed: there is nothing left to cancel." aria-describedby="admin-actions-why">Cancel run…</button>',
  );
  expect(markup).toContain('<button type="button" class="secondary" aria-disabled="false">Retry</button>');
});

test("the confirm dialog is closed until asked for: nothing of it is rendered inside", () => {
  const markup = renderToStaticMarkup(<AdminActions runId={RUN} status="running" />);
  expect(markup).toMatch(/<dialog class="modal" aria-labelledby="[^"]+-title" aria-describedby="[^"]+-what"><\/dialog>/);
});
