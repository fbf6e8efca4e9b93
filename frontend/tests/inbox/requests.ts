// An approval request as the inbox API sends it, for the inbox's tests.
import type { ApprovalRequest } from "../../src/inbox/types";

export const NOW = Date.parse("2026-12-04T12:00:00Z");

export function request(id: number, over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    id, run: "7b0c0b8e-0000-4000-8000-000000000000", flow: "invoice-sign-off", runtime: "durable",
    node: "fin", execution_id: "root:1", groups: ["finance"], policy: "all", title: `Request ${id}`,
    instructions: "", shown: [], status: "open", outcome: "", created_at: "2026-12-04T11:00:00Z",
    due_at: null, overdue: false, closed_at: null, assignee: null, delegations: [],
    may_decide: true, decisions: [], why_not: null,
    context: {
      started_by: "analyst", started_at: "2026-12-04T11:50:00Z", flow: "invoice-sign-off",
      flow_name: "Invoice sign-off", version: 2, input: null, input_more: 0,
    }, ...over,
  };
}
