/** SVG path geometry for routed edges. */

import type { Point } from "./types";

function mid(a: Point, b: Point): Point {
  return { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
}

function xy({ x, y }: Point): string {
  return `${x},${y}`;
}

/**
 * Return an SVG path through `points`: straight along each segment, bending
 * smoothly at each inner point (a quadratic curve between the midpoints of
 * the two segments that meet there).
 */
export function smoothPath(points: readonly Point[]): string {
  const first = points[0];
  if (first === undefined) {
    return "";
  }
  const commands = [`M${xy(first)}`];
  for (let i = 1; i < points.length - 1; i++) {
    const corner = points[i]!;
    commands.push(`L${xy(mid(points[i - 1]!, corner))}`, `Q${xy(corner)} ${xy(mid(corner, points[i + 1]!))}`);
  }
  if (points.length > 1) {
    commands.push(`L${xy(points[points.length - 1]!)}`);
  }
  return commands.join(" ");
}

/** Return the point halfway along a polyline's vertices (where its label goes). */
export function middlePoint(points: readonly Point[]): Point {
  return points[Math.floor(points.length / 2)] ?? { x: 0, y: 0 };
}
