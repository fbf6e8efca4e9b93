/** The Runs page's filters as API query strings, and its search box's two spellings (pure). */

export interface RunFilters {
  flow: string;
  status: string;
  startedBy: string;
  createdAfter: string;
  createdBefore: string;
  search: string;
  waitingOnMe: boolean;
}

export const NO_FILTERS: RunFilters = {
  flow: "",
  status: "",
  startedBy: "",
  createdAfter: "",
  createdBefore: "",
  search: "",
  waitingOnMe: false,
};

export type Search =
  | { kind: "none" }
  | { kind: "state"; condition: string }
  | { kind: "id"; id: string }
  | { kind: "idPrefix"; prefix: string }
  | { kind: "invalid"; message: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Read the search box: `state=field:value`, a run id, or the start of one. */
export function parseSearch(text: string): Search {
  const trimmed = text.trim();
  if (trimmed === "") return { kind: "none" };
  if (trimmed.startsWith("state=")) {
    const condition = trimmed.slice("state=".length);
    return /^[A-Za-z_][A-Za-z0-9_]{0,99}:/.test(condition)
      ? { kind: "state", condition }
      : { kind: "invalid", message: "Write state=field:value, e.g. state=decision:approved." };
  }
  const lower = trimmed.toLowerCase();
  if (UUID.test(lower)) return { kind: "id", id: lower };
  if (/^[0-9a-f-]{4,36}$/.test(lower)) return { kind: "idPrefix", prefix: lower };
  return { kind: "invalid", message: "Search by a run id (or its first characters) or by state=field:value." };
}

/** A date input's `YYYY-MM-DD` as the API's ISO time: the start of that day, or its end for "before". */
function dayBound(day: string, end: boolean): string {
  return end ? `${day}T23:59:59.999999Z` : `${day}T00:00:00Z`;
}

/** The query string for GET /api/runs/ (without the page). */
export function runsQuery(filters: RunFilters, search: Search): URLSearchParams {
  const params = new URLSearchParams();
  if (filters.flow) params.set("flow", filters.flow);
  if (filters.status) params.set("status", filters.status);
  if (filters.waitingOnMe) params.set("waiting_on_me", "true");
  if (filters.startedBy.trim()) params.set("started_by", filters.startedBy.trim());
  if (filters.createdAfter) params.set("created_after", dayBound(filters.createdAfter, false));
  if (filters.createdBefore) params.set("created_before", dayBound(filters.createdBefore, true));
  if (search.kind === "state") params.set("state", search.condition);
  return params;
}
