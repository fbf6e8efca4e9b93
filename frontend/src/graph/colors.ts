/** Monitor colors (CONTRACT.md §4) and how the view marks each one. */

export const COLORS = [
  "pending",
  "running",
  "waiting",
  "completed",
  "failed",
  "skipped",
  "cancelled",
] as const;

export type Color = (typeof COLORS)[number];

/** Colors keyed by node id (a subflow's nodes: `<subflow node>/<child node>`). */
export type ColorMap = Readonly<Record<string, Color>>;

/**
 * The non-color cue shown next to each color, so that no state is told by
 * hue alone.
 */
export const COLOR_CUES: Readonly<Record<Color, { icon: string; text: string }>> = {
  pending: { icon: "○", text: "pending" },
  running: { icon: "◌", text: "running" },
  waiting: { icon: "‖", text: "waiting" },
  completed: { icon: "✓", text: "completed" },
  failed: { icon: "✕", text: "failed" },
  skipped: { icon: "↷", text: "skipped" },
  cancelled: { icon: "⊘", text: "cancelled" },
};

export function isColor(value: unknown): value is Color {
  return typeof value === "string" && (COLORS as readonly string[]).includes(value);
}

/** Return the CSS class (defined in flow-view.css) that paints `color`. */
export function colorClass(color: Color): string {
  return `braid-color--${color}`;
}
