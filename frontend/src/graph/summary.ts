/**
 * One-line descriptions of a node's kind and config, e.g. `task · http.request`.
 *
 * Config is read defensively: the server validates it, but a draft shown
 * here may still lack a field, and the view must not print `undefined`.
 */

import type { ApprovalPolicy, GraphEdge, GraphNode } from "./types";

const SEPARATOR = " · ";
const MISSING = "?";

function text(value: unknown): string {
  return typeof value === "string" && value !== "" ? value : MISSING;
}

function list(value: unknown): string {
  return Array.isArray(value) && value.length > 0 ? value.map(text).join(", ") : MISSING;
}

function keys(value: unknown): string {
  return typeof value === "object" && value !== null ? list(Object.keys(value)) : MISSING;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function policyText(policy: ApprovalPolicy | undefined): string {
  if (typeof policy === "object" && policy !== null) {
    return `quorum ${String(policy.quorum)}`;
  }
  return text(policy);
}

function configSummary(node: GraphNode): string | null {
  switch (node.type) {
    case "start":
    case "end":
      return null;
    case "task":
      return text(node.action);
    case "set":
      return keys(node.values);
    case "if":
      return text(node.condition);
    case "switch":
      return plural(Array.isArray(node.cases) ? node.cases.length : 0, "case");
    case "fork":
    case "race":
      return list(node.branches);
    case "gather":
      return list(node.slots);
    case "foreach":
      return `${text(node.as)} in ${text(node.items)}`;
    case "loop":
      return `while ${text(node.while)}`;
    case "approval":
      return `${list(node.groups)}${SEPARATOR}${policyText(node.policy)}`;
    case "wait":
      return typeof node.seconds === "number" ? `${node.seconds} s` : `until ${text(node.until)}`;
    case "subflow":
      return typeof node.version === "number" ? `${text(node.flow)} v${node.version}` : text(node.flow);
    case "fail":
      return text(node.error);
  }
}

/** Return the node's type, followed by its key config when it has any. */
export function kindSummary(node: GraphNode): string {
  const config = configSummary(node);
  return config === null ? node.type : `${node.type}${SEPARATOR}${config}`;
}

/** Return the label an edge carries: its outcome or branch, then its slot; "" when neither. */
export function edgeLabel(edge: GraphEdge): string {
  const parts: string[] = [];
  const choice = edge.branch ?? edge.outcome;
  if (choice !== undefined) {
    parts.push(choice);
  }
  if (edge.slot !== undefined) {
    parts.push(`slot ${edge.slot}`);
  }
  return parts.join(SEPARATOR);
}
