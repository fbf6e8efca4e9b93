/** Shapes the monitor reads from the REST API and the run sockets. */

import type { Color } from "../graph/colors";

export const RUN_STATUSES = ["running", "waiting", "completed", "failed", "cancelled"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export function isRunStatus(value: unknown): value is RunStatus {
  return typeof value === "string" && (RUN_STATUSES as readonly string[]).includes(value);
}

export function isFinished(status: string): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** A run as `GET /api/runs/` lists it (RunSerializer). */
export interface RunRow {
  id: string;
  flow: string | null;
  version: number | null;
  label: string;
  status: RunStatus;
  input: unknown;
  state: unknown;
  error: string;
  started_by: string | null;
  created_at: string;
  updated_at: string;
}

/** One node row (CONTRACT §3); `status_detail` when the server sends it. */
export interface NodeRow {
  status: "running" | "waiting" | "completed" | "failed";
  execution_id: string;
  result: unknown;
  attempt?: number;
  status_detail?: string;
}

/** One person's decision at an approval (`decisions` in the tree, the snapshot and deltas). */
export interface Vote {
  user: string;
  groups: string[];
  decision: "approve" | "reject";
  comment: string;
  /** RFC 3339. */
  at: string;
}

/** A run's live picture: rows, colors, reasons and the decided approvals' votes by node path. */
export interface RunPicture {
  status: string;
  nodes: Record<string, NodeRow>;
  colors: Record<string, Color>;
  reasons: Record<string, string>;
  decisions: Record<string, Vote[]>;
}

/** One trace event (`GET /api/runs/<id>/trace/`). */
export interface TraceEvent {
  seq: number;
  event: string;
  execution_id: string;
  node: string | null;
  at: string;
  detail: Record<string, unknown>;
}

export interface Paged<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}
