/** What the start form shows for a refused start: per form field, and per input field. */

import { ApiError } from "./api";

export interface StartErrors {
  flow?: string;
  input?: string;
  form?: string;
  /** `run.input` refusals name each input field that is wrong: [path, reason], in path order. */
  fields?: [string, string][];
}

export const SAFE_TO_RETRY = "Start it again: if the first try reached the server, you get that run.";

/** Read a refusal of POST /api/runs/ (or any other error) into the form's places. */
export function startErrors(error: unknown): StartErrors {
  if (!(error instanceof ApiError)) return { form: String(error) };
  // The start may have reached the server (no answer), or been created before the server
  // or a proxy in front of it failed (5xx): its Idempotency-Key makes a second try safe.
  if (error.status === 0 || error.status >= 500) return { form: `${error.message} ${SAFE_TO_RETRY}` };
  const body = error.body;
  if (typeof body === "object" && body !== null) {
    const record = body as Record<string, unknown>;
    const out: StartErrors = {};
    const text = (value: unknown) => (Array.isArray(value) ? value.join(" ") : String(value));
    if (record.flow !== undefined) out.flow = text(record.flow);
    if (record.input !== undefined) out.input = text(record.input);
    if (record.version !== undefined) out.form = `version: ${text(record.version)}`;
    const fields = record.fields;
    if (record.code === "run.input" && typeof fields === "object" && fields !== null) {
      out.fields = Object.entries(fields as Record<string, unknown>)
        .map(([path, reason]): [string, string] => [path, text(reason)])
        .sort(([a], [b]) => a.localeCompare(b));
      out.input = "The input does not match the flow's input schema; each field marked below says why.";
      return out;
    }
    if (typeof record.detail === "string") out.form = record.detail;
    if (Object.keys(out).length > 0) return out;
  }
  return { form: error.message };
}
