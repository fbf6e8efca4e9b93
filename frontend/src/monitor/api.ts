/** Talking to Braid's REST API from the browser: session cookie, CSRF token, JSON errors. */

/** Read Django's `csrftoken` cookie (the form's token is the same value). */
export function csrfToken(): string {
  const match = document.cookie.split("; ").find((part) => part.startsWith("csrftoken="));
  if (match !== undefined) return decodeURIComponent(match.slice("csrftoken=".length));
  const input = document.querySelector<HTMLInputElement>("input[name=csrfmiddlewaretoken]");
  return input?.value ?? "";
}

/** A refused request: the HTTP status and the parsed JSON body (field errors or `detail`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(errorText(status, body));
    this.name = "ApiError";
  }
}

/** Return the text to show for a refusal: its `detail`, else its field errors, else the status. */
export function errorText(status: number, body: unknown): string {
  if (typeof body === "object" && body !== null) {
    const record = body as Record<string, unknown>;
    if (typeof record.detail === "string") return record.detail;
    const fields = Object.entries(record)
      .filter(([key]) => key !== "code")
      .map(([key, value]) => `${key}: ${Array.isArray(value) ? value.join(" ") : String(value)}`);
    if (fields.length > 0) return fields.join("; ");
  }
  return status === 0 ? "The server could not be reached." : `The server answered ${status}.`;
}

async function send(
  method: string,
  url: string,
  body?: unknown,
  extra: Record<string, string> = {},
): Promise<unknown> {
  const headers: Record<string, string> = { Accept: "application/json", ...extra };
  if (method !== "GET") {
    headers["Content-Type"] = "application/json";
    headers["X-CSRFToken"] = csrfToken();
  }
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers,
      credentials: "same-origin",
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(0, null);
  }
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

export const getJson = (url: string): Promise<unknown> => send("GET", url);
export const postJson = (
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<unknown> => send("POST", url, body, headers);

/** Return a new Idempotency-Key: 32 random hex digits (getRandomValues also works over
 * plain http, where crypto.randomUUID does not exist). */
export function idempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The websocket URL for a path on this page's host (ws: or wss: to match the page). */
export function socketUrl(path: string): string {
  const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${window.location.host}${path}`;
}

/** Read the JSON a page's `json_script` wrote into `<script id=…>`. */
export function readPageData(id: string | undefined): unknown {
  const script = id === undefined ? null : document.getElementById(id);
  if (script === null) throw new Error(`This page has no data block #${String(id)}.`);
  return JSON.parse(script.textContent ?? "null");
}
