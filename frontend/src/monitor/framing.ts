/** Where the run view opens (pure): framed on the live work, no smaller than readable. */

import type { Color } from "../graph/colors";
import { READABLE_PX, zoomFloor } from "../graph/zoom";

/** Text on the canvas is never under this on screen (UI.md, issue 31). */
export const MIN_SCREEN_TEXT_PX = READABLE_PX;

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Padding {
  top: number;
  right: number;
  bottom: number;
  left: number;
}

export interface Viewport {
  x: number;
  y: number;
  zoom: number;
}

/** How a frame was chosen: around the live nodes, or the whole graph (nothing is live). */
export type FrameKind = "live" | "whole";

const LIVE: ReadonlySet<string> = new Set<Color>(["running", "waiting"]);

/** The node ids (of those drawn) whose color is running or waiting, in the order given. */
export function liveNodeIds(colors: Readonly<Record<string, string>>, drawn: readonly string[]): string[] {
  return drawn.filter((id) => LIVE.has(colors[id] ?? ""));
}

/** The smallest zoom at which text of `smallestPx` CSS pixels shows at `minPx` or more. */
export function readableZoom(smallestPx: number, minPx: number = MIN_SCREEN_TEXT_PX): number {
  if (!Number.isFinite(smallestPx) || smallestPx <= 0) return 1; // nothing measured: no floor above 1
  return zoomFloor(smallestPx, minPx);
}

/** Room kept clear of the canvas's overlays: less on a phone, where there is no mini map. */
export function framePadding(canvasWidth: number): Padding {
  return canvasWidth < 600 ? { top: 24, right: 16, bottom: 24, left: 16 } : { top: 32, right: 180, bottom: 32, left: 64 };
}

/**
 * The viewport that shows `bounds` as large as fits (never over `maxZoom`) and never under
 * `minZoom`. What fits is centered; what does not fit at `minZoom` is panned to instead:
 * live work keeps its center in view, a whole graph shows its top (where the run begins),
 * centered on `anchorX` (the start node's middle) when it is too wide.
 */
export function frameViewport(
  bounds: Rect,
  canvas: { width: number; height: number },
  padding: Padding,
  zoomRange: { min: number; max: number },
  kind: FrameKind,
  anchorX?: number,
): Viewport {
  const width = Math.max(1, canvas.width - padding.left - padding.right);
  const height = Math.max(1, canvas.height - padding.top - padding.bottom);
  const fit = Math.min(width / Math.max(bounds.width, 1), height / Math.max(bounds.height, 1));
  const zoom = Math.max(zoomRange.min, Math.min(fit, Math.max(zoomRange.max, zoomRange.min)));
  const centerX = bounds.x + bounds.width / 2;
  const centerY = bounds.y + bounds.height / 2;
  let x = padding.left + width / 2 - centerX * zoom;
  let y = padding.top + height / 2 - centerY * zoom;
  if (kind === "whole" && bounds.height * zoom > height) y = padding.top - bounds.y * zoom;
  if (kind === "whole" && bounds.width * zoom > width && anchorX !== undefined) x = padding.left + width / 2 - anchorX * zoom;
  return { x, y, zoom };
}

/**
 * Which live nodes to frame (pure): all of them when their bounds fit the canvas at the zoom
 * floor, else only the first (in drawing order). Centered between live nodes that do not fit
 * together, a phone showed two halves of cards and neither whole; one whole card can be read,
 * and the others are a pan away.
 */
export function liveToFrame<T>(
  live: readonly T[],
  boundsOf: (nodes: readonly T[]) => Rect,
  canvas: { width: number; height: number },
  padding: Padding,
  floor: number,
): readonly T[] {
  if (live.length < 2) return live;
  const bounds = boundsOf(live);
  const fits = bounds.width * floor <= canvas.width - padding.left - padding.right
    && bounds.height * floor <= canvas.height - padding.top - padding.bottom;
  return fits ? live : live.slice(0, 1);
}

/** Whether a rectangle lies wholly inside the canvas at a viewport (for tests and checks). */
export function shownWhole(rect: Rect, viewport: Viewport, canvas: { width: number; height: number }): boolean {
  const left = rect.x * viewport.zoom + viewport.x;
  const top = rect.y * viewport.zoom + viewport.y;
  return left >= 0 && top >= 0 && left + rect.width * viewport.zoom <= canvas.width && top + rect.height * viewport.zoom <= canvas.height;
}
