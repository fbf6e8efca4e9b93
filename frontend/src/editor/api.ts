/** The flows API as the designer uses it: JSON in and out, Django's CSRF token on writes. */

import type { GraphDocument } from "../graph/types";

export interface Problem {
  code: string;
  severity: "error" | "warning";
  message: string;
  node: string | null;
  edge: string | null;
  edge_index: number | null;
  field: string | null;
  position: { line: number; column: number; offset: number } | null;
}

export interface Report {
  ok: boolean;
  errors: Problem[];
  warnings: Problem[];
}

export interface FlowRecord {
  slug: string;
  name: string;
  owner: string;
  draft: GraphDocument;
  revision: number;
  latest_version: number | null;
  created_at: string;
  updated_at: string;
}

export interface VersionRecord {
  flow: string;
  number: number;
  graph: GraphDocument;
  content_hash: string;
  published_by: string;
  published_at: string;
}

export interface ActionInfo {
  name: string;
  outcomes: string[];
  params: { name: string; types: string[]; required: boolean }[];
}

/** A refused request: the HTTP status and the JSON body the API sent. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(typeof body.detail === "string" ? body.detail : `The server answered ${status}.`);
  }
}

let csrfToken = "";

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET") headers["X-CSRFToken"] = csrfToken;
  const response = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown = {};
  try {
    parsed = text === "" ? {} : JSON.parse(text);
  } catch {
    parsed = { detail: `The server answered ${response.status} with a body that is not JSON.` };
  }
  if (!response.ok) throw new ApiError(response.status, parsed as Record<string, unknown>);
  return parsed as T;
}

export function flowPath(slug: string, rest = ""): string {
  return `/api/flows/${encodeURIComponent(slug)}/${rest}`;
}

/** Render an ApiError body's field errors as one sentence. */
export function errorText(error: unknown): string {
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
  const { body } = error;
  if (typeof body.detail === "string") return body.detail;
  const parts = Object.entries(body)
    .filter(([key]) => key !== "code")
    .map(([key, value]) => `${key}: ${Array.isArray(value) ? value.join(" ") : JSON.stringify(value)}`);
  return parts.length > 0 ? parts.join("; ") : error.message;
}

/** Relative time ("3 min ago") for a timestamp; the absolute time goes in a tooltip. */
export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (!Number.isFinite(seconds)) return iso;
  if (seconds < 45) return "just now";
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  return `${days} day${days === 1 ? "" : "s"} ago`;
}

export function absoluteTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
