/**
 * Structural checks on JSON that claims to be a `braid.graph/1` document.
 *
 * The server's validator owns the contract's rules (reachability, outcomes,
 * slots, CEL). These checks cover only what the view itself relies on: node
 * ids and types, edge endpoints and layout points, so that a bad document
 * produces a readable message instead of a broken canvas.
 */

import { type Color, type ColorMap, isColor } from "./colors";
import { GRAPH_FORMAT, type GraphDocument, isNodeType } from "./types";

/** Raised for a document the view cannot draw; `message` is shown to the user. */
export class GraphFormatError extends Error {
  override name = "GraphFormatError";
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** Parse JSON text, naming `what` in the error when it does not parse. */
export function parseJsonText(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new GraphFormatError(`${what} is not valid JSON (${reason}).`);
  }
}

function checkNodes(nodes: unknown): Set<string> {
  if (!Array.isArray(nodes)) {
    throw new GraphFormatError('"nodes" must be an array.');
  }
  const ids = new Set<string>();
  nodes.forEach((node: unknown, index) => {
    if (!isObject(node)) {
      throw new GraphFormatError(`nodes[${index}] must be an object.`);
    }
    const { id, type } = node;
    if (typeof id !== "string" || id === "") {
      throw new GraphFormatError(`nodes[${index}] needs a non-empty string "id".`);
    }
    if (!isNodeType(type)) {
      throw new GraphFormatError(`Node "${id}" has unknown type ${JSON.stringify(type)}.`);
    }
    if (ids.has(id)) {
      throw new GraphFormatError(`Node id "${id}" is used twice.`);
    }
    ids.add(id);
  });
  return ids;
}

const OPTIONAL_EDGE_TEXT = ["id", "outcome", "branch", "slot"] as const;

function checkEdges(edges: unknown, nodeIds: ReadonlySet<string>): void {
  if (!Array.isArray(edges)) {
    throw new GraphFormatError('"edges" must be an array.');
  }
  edges.forEach((edge: unknown, index) => {
    if (!isObject(edge)) {
      throw new GraphFormatError(`edges[${index}] must be an object.`);
    }
    for (const end of ["source", "target"] as const) {
      const nodeId = edge[end];
      if (typeof nodeId !== "string" || !nodeIds.has(nodeId)) {
        throw new GraphFormatError(
          `edges[${index}] has ${end} ${JSON.stringify(nodeId)}, which is not a node id.`,
        );
      }
    }
    for (const field of OPTIONAL_EDGE_TEXT) {
      if (field in edge && typeof edge[field] !== "string") {
        throw new GraphFormatError(`edges[${index}] field "${field}" must be a string.`);
      }
    }
  });
}

function checkLayout(layout: unknown): void {
  if (layout === undefined) {
    return;
  }
  if (!isObject(layout)) {
    throw new GraphFormatError('"layout" must be an object of {"x", "y"} points.');
  }
  for (const [nodeId, point] of Object.entries(layout)) {
    if (!isObject(point) || !isFiniteNumber(point.x) || !isFiniteNumber(point.y)) {
      throw new GraphFormatError(`layout["${nodeId}"] must be {"x": number, "y": number}.`);
    }
  }
}

/** Return `value` as a graph document, or throw GraphFormatError saying what is wrong. */
export function parseGraph(value: unknown): GraphDocument {
  if (!isObject(value)) {
    throw new GraphFormatError("The graph must be a JSON object.");
  }
  if (value.format !== GRAPH_FORMAT) {
    throw new GraphFormatError(
      `The graph's format is ${JSON.stringify(value.format)}, expected "${GRAPH_FORMAT}".`,
    );
  }
  if ("name" in value && typeof value.name !== "string") {
    throw new GraphFormatError('"name" must be a string.');
  }
  checkEdges(value.edges, checkNodes(value.nodes));
  checkLayout(value.layout);
  // Per-type config is the server validator's business; the view reads it defensively.
  return value as unknown as GraphDocument;
}

/** Return `value` as `{nodeId: color}`, or throw GraphFormatError naming the bad entry. */
export function parseColors(value: unknown): ColorMap {
  if (!isObject(value)) {
    throw new GraphFormatError("The colors must be a JSON object of {nodeId: color}.");
  }
  const colors: Record<string, Color> = {};
  for (const [nodeId, color] of Object.entries(value)) {
    if (!isColor(color)) {
      throw new GraphFormatError(`Node "${nodeId}" has unknown color ${JSON.stringify(color)}.`);
    }
    colors[nodeId] = color;
  }
  return colors;
}
