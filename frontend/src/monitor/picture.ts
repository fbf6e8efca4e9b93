/** Applying the run socket's snapshot and delta messages to a run's picture (pure). */

import { type Color, isColor } from "../graph/colors";
import type { NodeRow, RunPicture, Vote } from "./types";

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function colorsOf(value: unknown): Record<string, Color> {
  const out: Record<string, Color> = {};
  if (isObject(value)) {
    for (const [path, color] of Object.entries(value)) {
      if (isColor(color)) out[path] = color;
    }
  }
  return out;
}

function textsOf(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (isObject(value)) {
    for (const [path, text] of Object.entries(value)) {
      if (typeof text === "string") out[path] = text;
    }
  }
  return out;
}

function rowsOf(value: unknown): Record<string, NodeRow> {
  const out: Record<string, NodeRow> = {};
  if (isObject(value)) {
    for (const [path, row] of Object.entries(value)) {
      if (isObject(row) && typeof row.status === "string") out[path] = row as unknown as NodeRow;
    }
  }
  return out;
}

function voteOf(value: unknown): Vote | null {
  if (!isObject(value)) return null;
  const { user, groups, decision, comment, at } = value;
  if (typeof user !== "string" || (decision !== "approve" && decision !== "reject") || typeof at !== "string") return null;
  return {
    user,
    groups: Array.isArray(groups) ? groups.filter((group): group is string => typeof group === "string") : [],
    decision,
    comment: typeof comment === "string" ? comment : "",
    at,
  };
}

/** The votes by node path; a vote that is not one (no user, an unknown decision) is dropped. */
function votesOf(value: unknown): Record<string, Vote[]> {
  const out: Record<string, Vote[]> = {};
  if (isObject(value)) {
    for (const [path, votes] of Object.entries(value)) {
      if (Array.isArray(votes)) out[path] = votes.map(voteOf).filter((vote): vote is Vote => vote !== null);
    }
  }
  return out;
}

/** Return the picture a tree response or a snapshot describes; `reasons` and `decisions` may be absent. */
export function pictureFrom(message: unknown): RunPicture {
  const body = isObject(message) ? message : {};
  return {
    status: typeof body.status === "string" ? body.status : "unknown",
    nodes: rowsOf(body.nodes),
    colors: colorsOf(body.colors),
    reasons: textsOf(body.reasons),
    decisions: votesOf(body.decisions),
  };
}

/** Return the picture after one delta: changed rows, colors, reasons and votes replace the old ones. */
export function applyDelta(picture: RunPicture, delta: unknown): RunPicture {
  const body = isObject(delta) ? delta : {};
  return {
    status: typeof body.status === "string" ? body.status : picture.status,
    nodes: { ...picture.nodes, ...rowsOf(body.nodes) },
    colors: { ...picture.colors, ...colorsOf(body.colors) },
    reasons: { ...picture.reasons, ...textsOf(body.reasons) },
    decisions: { ...picture.decisions, ...votesOf(body.decisions) },
  };
}
