/** An approval request as `/api/approvals/` returns it. */
export interface Shown {
  field: string;
  value: unknown;
}

export interface DecisionEntry {
  user: string;
  decision: "approve" | "reject";
  comment: string;
  at: string;
}

export interface Delegation {
  from: string;
  to: string;
  groups: string[];
}

/** One top-level field of the run's input as short text (the server cuts long values). */
export interface InputField {
  field: string;
  text: string;
}

/** Who started the request's run, when, the flow and version, and (without `show`) its input. */
export interface RunContext {
  started_by: string | null;
  started_at: string;
  flow: string | null;
  flow_name: string;
  version: number | null;
  input: InputField[] | null;
  input_more: number;
}

/** Why the caller may not decide an open request they see; the server words it. */
export interface WhyNot {
  code: string;
  text: string;
}

export interface ApprovalRequest {
  id: number;
  run: string;
  flow: string | null;
  runtime: string;
  node: string;
  execution_id: string;
  groups: string[];
  policy: "all" | "any" | { quorum: number };
  title: string;
  instructions: string;
  shown: Shown[];
  status: "open" | "closed";
  outcome: string;
  created_at: string;
  due_at: string | null;
  overdue: boolean;
  closed_at: string | null;
  assignee: string | null;
  delegations: Delegation[];
  may_decide: boolean;
  why_not: WhyNot | null;
  context: RunContext;
  decisions: DecisionEntry[];
}

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export interface BulkResult {
  id: number;
  result: "done" | "refused";
  code: string;
  detail: string;
}

export interface BulkSummary {
  total: number;
  done: number;
  refused: number;
  results: BulkResult[];
}

export interface InboxConfig {
  user: string;
  groups: string[];
  admin: boolean;
  csrfToken: string;
  api: string;
  runUrl: string;
}
