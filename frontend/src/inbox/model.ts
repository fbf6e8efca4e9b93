/** Pure inbox rules: filtering, grouping by flow, times and labels. No React, no DOM. */
import type { ApprovalRequest, DecisionEntry } from "./types";

export type DueFilter = "any" | "overdue" | "due" | "none";

export interface Filters {
  search: string;
  flow: string;
  group: string;
  due: DueFilter;
  field: string;
  fieldValue: string;
}

export const NO_FILTERS: Filters = { search: "", flow: "", group: "", due: "any", field: "", fieldValue: "" };

export interface FlowGroup {
  flow: string;
  requests: ApprovalRequest[];
}

/** Return a shown value as text: strings as they are, anything else as JSON. */
export function valueText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  return JSON.stringify(value);
}

/** Return the flow's name for display ("no flow" for a run of a file). */
export function flowName(request: ApprovalRequest): string {
  return request.flow ?? "(a file run)";
}

/** Return whether a request passes every filter. */
export function matches(request: ApprovalRequest, filters: Filters, now: number): boolean {
  if (filters.flow && flowName(request) !== filters.flow) return false;
  if (filters.group && !request.groups.includes(filters.group)) return false;
  if (!matchesDue(request, filters.due, now)) return false;
  if (filters.field) {
    const shown = request.shown.find((s) => s.field === filters.field);
    if (shown === undefined) return false;
    const wanted = filters.fieldValue.trim().toLowerCase();
    if (wanted && !valueText(shown.value).toLowerCase().includes(wanted)) return false;
  }
  const words = filters.search.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const haystack = [
    request.title, request.instructions, request.node, flowName(request),
    ...request.shown.map((s) => `${s.field} ${valueText(s.value)}`),
    ...(request.context.input ?? []).map((i) => `${i.field} ${i.text}`),
    request.context.started_by ?? "",
  ].join(" ").toLowerCase();
  return words.every((word) => haystack.includes(word));
}

function matchesDue(request: ApprovalRequest, due: DueFilter, now: number): boolean {
  if (due === "any") return true;
  if (request.due_at === null) return due === "none";
  const overdue = Date.parse(request.due_at) <= now;
  if (due === "overdue") return overdue;
  if (due === "due") return !overdue;
  return false;
}

/** Return the requests grouped by flow: groups by their newest request, newest first inside. */
export function groupByFlow(requests: ApprovalRequest[]): FlowGroup[] {
  const newestFirst = [...requests].sort(
    (a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || b.id - a.id,
  );
  const groups = new Map<string, ApprovalRequest[]>();
  for (const request of newestFirst) {
    const name = flowName(request);
    const list = groups.get(name) ?? [];
    list.push(request);
    groups.set(name, list);
  }
  return Array.from(groups, ([flow, list]) => ({ flow, requests: list }));
}

/** Return the distinct values of something over the requests, sorted. */
export function distinct(requests: ApprovalRequest[], pick: (r: ApprovalRequest) => string[]): string[] {
  return Array.from(new Set(requests.flatMap(pick))).sort();
}

const UNITS: [number, string][] = [
  [365 * 86400, "year"], [30 * 86400, "month"], [7 * 86400, "week"], [86400, "day"],
  [3600, "hour"], [60, "min"],
];

/** Return a duration in words: "3 min", "2 hours", "less than a minute". */
export function duration(seconds: number): string {
  const s = Math.abs(seconds);
  for (const [size, unit] of UNITS) {
    if (s >= size) {
      const n = Math.floor(s / size);
      return unit === "min" ? `${n} min` : `${n} ${unit}${n === 1 ? "" : "s"}`;
    }
  }
  return "less than a minute";
}

/** Return "3 min ago" for a time in the past (or "in 3 min" for one ahead). */
export function relative(iso: string, now: number): string {
  const seconds = (now - Date.parse(iso)) / 1000;
  if (Math.abs(seconds) < 60) return "just now";
  return seconds >= 0 ? `${duration(seconds)} ago` : `in ${duration(seconds)}`;
}

/** Return the absolute time for a tooltip, in UTC so everyone reads the same text. */
export function absolute(iso: string): string {
  const date = new Date(iso);
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** Return how a request's deadline reads: "overdue by 5 min", "due in 2 hours", or "". */
export function dueText(request: ApprovalRequest, now: number): string {
  if (request.due_at === null) return "";
  const seconds = (Date.parse(request.due_at) - now) / 1000;
  return seconds <= 0 ? `overdue by ${duration(seconds)}` : `due in ${duration(seconds)}`;
}

/** Return a policy in words. */
export function policyText(policy: ApprovalRequest["policy"]): string {
  if (policy === "any") return "one approver";
  if (policy === "all") return "one approver from each group";
  return `${policy.quorum} approvers`;
}

/** Return a closed request's outcome as a kind (for its icon) and a sentence. */
export function outcomeOf(request: ApprovalRequest): { kind: "approved" | "rejected" | "cancelled"; text: string } {
  if (request.outcome === "approved") return { kind: "approved", text: "Approved" };
  if (request.outcome === "rejected") return { kind: "rejected", text: "Rejected" };
  return { kind: "cancelled", text: `Cancelled: ${request.outcome || "no reason given"}` };
}

/** Return one decision as a sentence: "finance approved: within budget". */
export function decisionText(entry: DecisionEntry): string {
  const verb = entry.decision === "approve" ? "approved" : "rejected";
  return entry.comment ? `${entry.user} ${verb}: ${entry.comment}` : `${entry.user} ${verb}`;
}

/** Return the bulk summary sentence: "3 of 4 done, 1 refused". */
export function bulkSentence(done: number, total: number): string {
  const refused = total - done;
  return `${done} of ${total} done${refused ? `, ${refused} refused` : ""}`;
}

/** Return the index after moving by `step` in a list of `length`, clamped. */
export function move(index: number, step: number, length: number): number {
  if (length === 0) return 0;
  return Math.max(0, Math.min(length - 1, index + step));
}
