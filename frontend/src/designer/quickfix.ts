/**
 * Quick fixes: a validation problem with one obvious fix offers it as a button.
 *
 * Only `state.write_undeclared` qualifies: a node writes a field the flow does not declare,
 * and declaring it is the fix. A `set` value, a task's `output` and a subflow's `output` get
 * `overwrite` (the reducer that keeps the last write); a foreach's `errors` field gets
 * `append`, the only reducer it may have. Other codes have more than one plausible fix
 * (a typo in a read, a slot to add or remove) and are left to the analyst.
 */

import type { GraphDocument, Reducer } from "../graph/types";

export interface ProblemRef {
  code: string;
  node: string | null;
  field: string | null;
}

export interface QuickFix {
  /** The button's text, e.g. "Declare `total` (overwrite)". */
  label: string;
  field: string;
  reducer: Reducer;
}

/** Return the field a `state.write_undeclared` problem names, and the reducer to declare it with. */
function undeclaredWrite(doc: GraphDocument, problem: ProblemRef): { field: string; reducer: Reducer } | null {
  const node = doc.nodes.find((n) => n.id === problem.node) as Record<string, unknown> | undefined;
  const where = problem.field ?? "";
  if (node === undefined) return null;
  const keyed = /^(values|output)\.(.+)$/.exec(where);
  if (keyed !== null && (node.type === "set" || node.type === "subflow")) return { field: keyed[2] ?? "", reducer: "overwrite" };
  if (where === "output" && node.type === "task" && typeof node.output === "string") return { field: node.output, reducer: "overwrite" };
  if (where === "errors" && node.type === "foreach" && typeof node.errors === "string") return { field: node.errors, reducer: "append" };
  return null;
}

/** Return the one obvious fix of a problem, or null when it has none (or it is already applied). */
export function quickFix(doc: GraphDocument, problem: ProblemRef): QuickFix | null {
  if (problem.code !== "state.write_undeclared") return null;
  const write = undeclaredWrite(doc, problem);
  if (write === null || write.field === "" || doc.state?.[write.field] !== undefined) return null;
  return { label: `Declare \`${write.field}\` (${write.reducer})`, ...write };
}

/** Return the document with the fix applied: the field declared with its reducer. */
export function applyFix(doc: GraphDocument, fix: QuickFix): GraphDocument {
  return { ...doc, state: { ...(doc.state ?? {}), [fix.field]: { reducer: fix.reducer } } };
}
