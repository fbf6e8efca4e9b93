/** An admin's cancel and retry (pure): when each applies, the reason's bound, and bulk results. */

import { isFinished } from "./types";

/** The longest cancel reason the server takes (runs/api.py REASON_MAX). */
export const REASON_MAX = 500;
/** Runs per bulk request: small, so the progress moves while a long selection is worked. */
export const BULK_CHUNK = 10;

export type RunAction = "cancel" | "retry";

const ENDED: Readonly<Record<string, string>> = { completed: "completed", failed: "failed", cancelled: "was cancelled" };

/** Why Cancel does not apply to a run in this status, or "" when it does. */
export function cancelBlocked(status: string): string {
  return isFinished(status) ? `The run ${ENDED[status] ?? status}: there is nothing left to cancel.` : "";
}

/** Why Retry does not apply to a run in this status, or "" when it does. */
export function retryBlocked(status: string): string {
  if (status === "failed") return "";
  return `Only a failed run can be retried; this one is ${status}.`;
}

/** Why an action does not apply to a run in this status, or "" when it does. */
export function actionBlocked(action: RunAction, status: string): string {
  return action === "cancel" ? cancelBlocked(status) : retryBlocked(status);
}

/** What is wrong with a cancel reason before it is sent, or "". */
export function reasonProblem(reason: string): string {
  const over = [...reason].length - REASON_MAX;
  return over > 0 ? `The reason is ${over} character${over === 1 ? "" : "s"} over the limit of ${REASON_MAX}.` : "";
}

/** Why a bulk action's button is disabled for this selection (statuses of the selected runs), or "". */
export function bulkBlocked(action: RunAction, statuses: readonly string[]): string {
  if (statuses.length === 0) return "Select runs first.";
  if (statuses.some((status) => actionBlocked(action, status) === "")) return "";
  return action === "cancel"
    ? "Every selected run has finished: there is nothing to cancel."
    : "Only failed runs can be retried, and none of the selected runs failed.";
}

/** One run's answer in a bulk action. */
export interface BulkResult {
  id: string;
  ok: boolean;
  code: string;
  error: string;
}

/** Read POST /api/runs/bulk/'s `results`; throw when the answer is out of step with the API. */
export function bulkResults(body: unknown): BulkResult[] {
  const results = (body as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) throw new Error("The bulk answer has no results list.");
  return results.map((item) => {
    const { id, ok, code, error } = item as Record<string, unknown>;
    if (typeof id !== "string" || typeof ok !== "boolean") throw new Error("A bulk result lacks its id or ok.");
    return { id, ok, code: typeof code === "string" ? code : "", error: typeof error === "string" ? error : "" };
  });
}

/** Split ids into the requests a bulk action sends, in order. */
export function chunks<T>(items: readonly T[], size: number = BULK_CHUNK): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

/** A bulk action as it goes: how many runs were answered, and each answer. */
export interface BulkProgress {
  action: RunAction;
  total: number;
  results: BulkResult[];
  /** Why a request failed as a whole (its runs are counted as refused with this), or "". */
  failure: string;
  finished: boolean;
}

/** "Cancelling: 20 of 45 runs answered" while it runs; "Cancel: 43 of 45 done, 2 refused." after. */
export function progressText(progress: BulkProgress): string {
  const done = progress.results.filter((result) => result.ok).length;
  const refused = progress.results.length - done;
  if (!progress.finished) {
    const verb = progress.action === "cancel" ? "Cancelling" : "Retrying";
    return `${verb}: ${progress.results.length} of ${progress.total} runs answered…`;
  }
  const name = progress.action === "cancel" ? "Cancel" : "Retry";
  return `${name}: ${done} of ${progress.total} done${refused > 0 ? `, ${refused} refused` : ""}.`;
}

/** The results a request that failed as a whole stands for: each of its runs refused with why. */
export function failedChunk(ids: readonly string[], why: string): BulkResult[] {
  return ids.map((id) => ({ id, ok: false, code: "request", error: why }));
}
