import type { ReactElement } from "react";
import type { NodeType } from "../graph/types";

/**
 * One line-drawn icon per node kind, as inline SVG: the glyphs used before (⋔ ⟳ ⧉ ⏱ …)
 * are missing from common Linux fonts and drew as empty boxes. Strokes take the text
 * color, so the icons follow the theme and the palette's hover and focus states.
 */
const SHAPES: Record<NodeType, ReactElement> = {
  start: <path d="M7 4l13 8-13 8z" fill="currentColor" />,
  end: <rect x="5" y="5" width="14" height="14" rx="1.5" fill="currentColor" />,
  task: (
    <>
      <circle cx="12" cy="12" r="3" />
      <circle cx="12" cy="12" r="7" />
      <path d="M12 2v3M12 19v3M2 12h3M19 12h3M4.9 4.9l2.1 2.1M17 17l2.1 2.1M4.9 19.1L7 17M17 7l2.1-2.1" />
    </>
  ),
  set: <path d="M4 20l4.5-1L19.5 8l-3.5-3.5L5 15.5zM14 6.5l3.5 3.5" />,
  if: <path d="M12 3l9 9-9 9-9-9z" />,
  switch: <path d="M12 21v-8M12 13L5 4M12 13V4M12 13l7-9" />,
  fork: <path d="M3 7h14M13 3l4 4-4 4M3 17h14M13 13l4 4-4 4" />,
  gather: (
    <>
      <circle cx="12" cy="12" r="9" />
      <path d="M12 7v10M7 12h10" />
    </>
  ),
  foreach: <path d="M20 12a8 8 0 1 1-2.4-5.7M20 3v5h-5" />,
  loop: <path d="M4 12a8 8 0 0 1 13.7-5.6M18 2.5v4h-4M20 12a8 8 0 0 1-13.7 5.6M6 21.5v-4h4" />,
  race: <path d="M5 21V4M5 4h13l-3.5 4L18 12H5" />,
  approval: <path d="M4 12.5l5 5L20 6.5" />,
  wait: (
    <>
      <circle cx="12" cy="13.5" r="7.5" />
      <path d="M12 13.5V9.5M9.5 2.5h5M12 2.5v3.5" />
    </>
  ),
  subflow: (
    <>
      <rect x="3" y="3" width="12" height="12" rx="1.5" />
      <rect x="9" y="9" width="12" height="12" rx="1.5" />
    </>
  ),
  fail: <path d="M6 6l12 12M18 6L6 18" />,
};

/** The icon of a node kind, decorative (the kind's name is always written beside it). */
export function NodeIcon({ type, size = 18 }: { type: NodeType; size?: number }) {
  return (
    <svg
      className="braid-node-icon"
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={2}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
      data-node-icon={type}
    >
      {SHAPES[type]}
    </svg>
  );
}
