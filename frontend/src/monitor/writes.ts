/**
 * The state writes of a node's lineage (`GET /api/runs/<id>/writes/?node=<path>`): its own
 * path's writes and those merged into it at gathers, foreach `done`, loop iterations and
 * race winners, in trace order up to the node's completion.
 */

import { getJson } from "./api";

/** One write that reached the node. `via` is null on the node's own path, else the merge. */
export interface StateWrite {
  seq: number;
  node: string;
  execution_id: string;
  field: string;
  /** A summary: a list or object comes as its JSON text, long text is cut with "…". */
  value: unknown;
  via: string | null;
}

export interface NodeWrites {
  node: string;
  execution_id: string;
  writes: StateWrite[];
}

/** The answer was not the shape the contract gives: a server and page out of step. */
export class WritesFormatError extends Error {
  override name = "WritesFormatError";
}

function isWrite(value: unknown): value is StateWrite {
  if (typeof value !== "object" || value === null) return false;
  const write = value as Record<string, unknown>;
  return (
    typeof write.seq === "number" &&
    typeof write.node === "string" &&
    typeof write.execution_id === "string" &&
    typeof write.field === "string" &&
    "value" in write &&
    (write.via === null || typeof write.via === "string")
  );
}

/** Return the writes an answer carries, or throw WritesFormatError naming what is off. */
export function parseWrites(body: unknown): NodeWrites {
  if (typeof body !== "object" || body === null) throw new WritesFormatError("The writes answer is not an object.");
  const record = body as Record<string, unknown>;
  if (typeof record.node !== "string" || typeof record.execution_id !== "string" || !Array.isArray(record.writes)) {
    throw new WritesFormatError("The writes answer lacks node, execution_id or writes.");
  }
  const bad = record.writes.findIndex((write) => !isWrite(write));
  if (bad >= 0) throw new WritesFormatError(`Write ${bad + 1} of the answer is not a write.`);
  return { node: record.node, execution_id: record.execution_id, writes: record.writes as StateWrite[] };
}

/** The URL of a node's writes; the path's `/` are escaped so the query stays one value. */
export function writesUrl(runId: string, node: string): string {
  return `/api/runs/${encodeURIComponent(runId)}/writes/?node=${encodeURIComponent(node)}`;
}

/** Fetch and check a node's writes; rejects with ApiError (its `detail`) or WritesFormatError. */
export async function fetchWrites(runId: string, node: string): Promise<NodeWrites> {
  return parseWrites(await getJson(writesUrl(runId, node)));
}

/** Return a write's value as text: strings as they are (lists and objects arrive as JSON text), the rest as JSON. */
export function valueText(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value) ?? "null");
}

/**
 * Keeps one node's writes current while the run changes: one request at a time, a change
 * during a request asks for one more after it, `gapMs` later (the last change is never
 * lost, and a busy run is not asked every 100 ms), and an answer for a node no longer
 * shown is dropped.
 */
export class WritesFollower {
  private node: string | null = null;
  private busy = false;
  private again = false;
  private stopped = false;

  constructor(
    private readonly load: (node: string) => Promise<NodeWrites>,
    private readonly show: (node: string, result: { writes: NodeWrites } | { error: unknown }) => void,
    private readonly gapMs = 0,
  ) {}

  /** Follow `node` (null: none); call again whenever the run's version changes. */
  refresh(node: string | null): void {
    this.node = node;
    if (node === null) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    void this.pull(node);
  }

  stop(): void {
    this.stopped = true;
  }

  private async pull(node: string): Promise<void> {
    this.busy = true;
    this.again = false;
    let result: { writes: NodeWrites } | { error: unknown };
    try {
      result = { writes: await this.load(node) };
    } catch (error) {
      result = { error };
    }
    this.busy = false;
    if (this.stopped) return;
    if (node === this.node) this.show(node, result);
    if (this.node === null) return;
    if (node !== this.node) void this.pull(this.node);
    else if (this.again) {
      this.busy = true; // the trailing pull is booked: later changes join it
      setTimeout(() => {
        this.busy = false;
        if (!this.stopped && this.node !== null) void this.pull(this.node);
      }, this.gapMs);
    }
  }
}
