/** The inbox's calls to `/api/approvals/`, with the session cookie and the CSRF token. */
import type { ApprovalRequest, BulkSummary, InboxConfig, Page } from "./types";

export class ApiError extends Error {
  constructor(message: string, readonly status: number, readonly code: string) {
    super(message);
  }
}

/** Return a readable sentence for an error body: `{code, detail}` or field errors. */
export function errorText(body: unknown, status: number): { code: string; text: string } {
  if (typeof body === "object" && body !== null) {
    const record = body as Record<string, unknown>;
    if (typeof record.detail === "string") {
      return { code: typeof record.code === "string" ? record.code : "error", text: record.detail };
    }
    const fields = Object.entries(record).map(([name, problem]) =>
      `${name}: ${Array.isArray(problem) ? problem.join(" ") : String(problem)}`);
    if (fields.length) return { code: "invalid", text: fields.join("; ") };
  }
  return { code: "error", text: `The server answered ${status}; try again.` };
}

/**
 * Send one JSON request with the session cookie (and the CSRF token when it names a method);
 * return the decoded body, or null for 204. Throws ApiError with a readable sentence.
 */
export async function requestJson(
  config: { api: string; csrfToken: string },
  path: string,
  init: RequestInit = {},
): Promise<unknown> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (init.method !== undefined) {
    headers["Content-Type"] = "application/json";
    headers["X-CSRFToken"] = config.csrfToken;
  }
  let response: Response;
  try {
    response = await fetch(`${config.api}${path}`, { credentials: "same-origin", ...init, headers });
  } catch {
    throw new ApiError("The server cannot be reached; check your connection and try again.", 0, "network");
  }
  if (response.status === 204) return null;
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) {
    const { code, text } = errorText(body, response.status);
    throw new ApiError(text, response.status, code);
  }
  return body;
}

export class InboxApi {
  constructor(private readonly config: InboxConfig) {}

  private async call<T>(path: string, init: RequestInit = {}): Promise<T> {
    return (await requestJson(this.config, path, init)) as T;
  }

  open(): Promise<Page<ApprovalRequest>> {
    return this.call("?limit=500");
  }

  archive(): Promise<Page<ApprovalRequest>> {
    return this.call("?status=closed&limit=200");
  }

  detail(id: number): Promise<ApprovalRequest> {
    return this.call(`${id}/`);
  }

  decide(id: number, decision: "approve" | "reject", comment: string): Promise<ApprovalRequest> {
    return this.call(`${id}/decide/`, { method: "POST", body: JSON.stringify({ decision, comment }) });
  }

  decideMany(ids: number[], decision: "approve" | "reject", comment: string): Promise<BulkSummary> {
    return this.call("decide/", { method: "POST", body: JSON.stringify({ ids, decision, comment }) });
  }

  delegate(id: number, to: string, comment: string): Promise<ApprovalRequest> {
    return this.call(`${id}/delegate/`, { method: "POST", body: JSON.stringify({ to, comment }) });
  }

  reassign(id: number, to: string, comment: string): Promise<ApprovalRequest> {
    return this.call(`${id}/reassign/`, { method: "POST", body: JSON.stringify({ to, comment }) });
  }
}
