/** What a gather's trace says: which slots each activation filled, by which branch, and the merge order. */

import type { TraceEvent } from "./types";

export interface GatherActivation {
  /** The activation context the arrivals are bucketed by (an iteration, an item, the root). */
  context: string;
  /** Slot → the execution id of the branch that filled it. */
  filled: Record<string, string>;
  /** The declared-slot order the writes were replayed in, once merged. */
  order: string[] | null;
}

function text(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** Return the gather `node`'s activations, in the order they first appear in the trace. */
export function gatherActivations(events: readonly TraceEvent[], node: string): GatherActivation[] {
  const byContext = new Map<string, GatherActivation>();
  const activation = (context: string) => {
    let found = byContext.get(context);
    if (found === undefined) {
      found = { context, filled: {}, order: null };
      byContext.set(context, found);
    }
    return found;
  };
  for (const event of events) {
    if (event.node !== node) continue;
    if (event.event === "gather.waiting") {
      const slot = text(event.detail.slot);
      const context = text(event.detail.context) ?? event.execution_id;
      if (slot !== null) activation(context).filled[slot] = event.execution_id;
    } else if (event.event === "gather.merged") {
      const merged = activation(event.execution_id);
      const inputs = Array.isArray(event.detail.inputs) ? event.detail.inputs : [];
      for (const input of inputs) {
        if (Array.isArray(input) && typeof input[0] === "string" && typeof input[1] === "string") {
          merged.filled[input[0]] = input[1];
        }
      }
      const order = Array.isArray(event.detail.order) ? event.detail.order.filter((s): s is string => typeof s === "string") : [];
      merged.order = order;
    }
  }
  return [...byContext.values()];
}

/** One line per activation: "root:1: a ← root:1:split.a:1, b ← root:1:split.b:1; merged in order a, b". */
export function describeActivation(activation: GatherActivation, slots: readonly string[]): string {
  const parts = slots.map((slot) => `${slot} ← ${activation.filled[slot] ?? "(empty)"}`);
  const state = activation.order === null ? "waiting for the empty slots" : `merged in order ${activation.order.join(", ")}`;
  return `${activation.context}: ${parts.join(", ")}; ${state}`;
}
