/**
 * One execution's colors and reasons, as the server derives them
 * (`GET /api/runs/<id>/execution/?id=<execution id>`, CONTRACT §4): choosing an item,
 * iteration or branch recolors the graph with these; the browser infers none itself.
 */

import { type Color, isColor } from "../graph/colors";
import { getJson } from "./api";

export interface ExecutionView {
  execution: string;
  colors: Record<string, Color>;
  reasons: Record<string, string>;
}

/** The answer was not the shape the contract gives: a server and page out of step. */
export class ExecutionViewFormatError extends Error {
  override name = "ExecutionViewFormatError";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Return the view an answer carries, or throw ExecutionViewFormatError naming what is off. */
export function parseExecutionView(body: unknown): ExecutionView {
  if (!isRecord(body) || typeof body.execution !== "string" || !isRecord(body.colors) || !isRecord(body.reasons)) {
    throw new ExecutionViewFormatError("The execution's answer lacks execution, colors or reasons.");
  }
  const colors: Record<string, Color> = {};
  for (const [path, color] of Object.entries(body.colors)) {
    if (!isColor(color)) throw new ExecutionViewFormatError(`The color of ${path} is not one of the seven: ${String(color)}.`);
    colors[path] = color;
  }
  const reasons: Record<string, string> = {};
  for (const [path, reason] of Object.entries(body.reasons)) {
    if (typeof reason === "string") reasons[path] = reason;
  }
  return { execution: body.execution, colors, reasons };
}

/** The URL of one execution's view; the id's `:` and `.` are escaped so the query stays one value. */
export function executionViewUrl(runId: string, execution: string): string {
  return `/api/runs/${encodeURIComponent(runId)}/execution/?id=${encodeURIComponent(execution)}`;
}

/** Fetch and check one execution's view; rejects with ApiError (its `detail`) or ExecutionViewFormatError. */
export async function fetchExecutionView(runId: string, execution: string): Promise<ExecutionView> {
  return parseExecutionView(await getJson(executionViewUrl(runId, execution)));
}

export type ViewResult = { view: ExecutionView } | { error: unknown };

/**
 * Keeps the chosen execution's view current while the run changes: one request at a time;
 * a change asks for one more request, started no sooner than `gapMs` after the one before
 * it (a busy run is asked at most once a `gapMs`, and the last change is never lost);
 * choosing another execution asks for it at once, and an answer for an execution no
 * longer chosen is dropped.
 */
export class ExecutionViewFollower {
  private chosen: string | null = null;
  private busy = false;
  private again = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private lastAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly load: (execution: string) => Promise<ExecutionView>,
    private readonly show: (execution: string, result: ViewResult) => void,
    private readonly gapMs = 1000,
  ) {}

  /** Follow `execution` (null: none); call again whenever the run changes. */
  refresh(execution: string | null): void {
    const switched = execution !== this.chosen;
    this.chosen = execution;
    if (switched) this.unbook();
    if (execution === null || this.stopped) return;
    if (this.busy) this.again = true;
    else if (switched) void this.pull(execution);
    else this.book(execution);
  }

  stop(): void {
    this.stopped = true;
    this.unbook();
  }

  /** Ask for `execution` once `gapMs` have passed since the last request (at once if they have). */
  private book(execution: string): void {
    if (this.timer !== null) return; // the booked request reads this change too
    const wait = this.lastAt + this.gapMs - Date.now();
    if (wait <= 0) {
      void this.pull(execution);
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.stopped && this.chosen !== null && !this.busy) void this.pull(this.chosen);
    }, wait);
  }

  private unbook(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private async pull(execution: string): Promise<void> {
    this.busy = true;
    this.again = false;
    this.lastAt = Date.now();
    let result: ViewResult;
    try {
      result = { view: await this.load(execution) };
    } catch (error) {
      result = { error };
    }
    this.busy = false;
    if (this.stopped) return;
    if (execution === this.chosen) this.show(execution, result);
    if (this.chosen === null) return;
    if (this.chosen !== execution) void this.pull(this.chosen);
    else if (this.again) this.book(this.chosen);
  }
}
