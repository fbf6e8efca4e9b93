/** Applying the run socket's snapshot and delta messages to a run's picture (pure). */

import { type Color, isColor } from "../graph/colors";
import type { NodeRow, RunPicture } from "./types";

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

/** Return the picture a tree response or a snapshot describes; `reasons` may be absent. */
export function pictureFrom(message: unknown): RunPicture {
  const body = isObject(message) ? message : {};
  return {
    status: typeof body.status === "string" ? body.status : "unknown",
    nodes: rowsOf(body.nodes),
    colors: colorsOf(body.colors),
    reasons: textsOf(body.reasons),
  };
}

/** Return the picture after one delta: changed rows, colors and reasons replace the old ones. */
export function applyDelta(picture: RunPicture, delta: unknown): RunPicture {
  const body = isObject(delta) ? delta : {};
  return {
    status: typeof body.status === "string" ? body.status : picture.status,
    nodes: { ...picture.nodes, ...rowsOf(body.nodes) },
    colors: { ...picture.colors, ...colorsOf(body.colors) },
    reasons: { ...picture.reasons, ...textsOf(body.reasons) },
  };
}
