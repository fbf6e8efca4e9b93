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
