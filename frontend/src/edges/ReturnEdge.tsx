import { BaseEdge, type Edge, type EdgeProps } from "@xyflow/react";
import { memo } from "react";
import type { Point } from "../graph/types";

/** Edge type of a body's return to its foreach, loop or race (the designer sets `data.lane`). */
export const RETURN_EDGE = "return";

export type ReturnEdgeData = { lane?: number };

const CORNER = 10;

/** Straight segments with small rounded corners: a route that reads as right angles. */
function orthogonalPath(points: readonly Point[]): string {
  const commands = [`M${points[0]!.x},${points[0]!.y}`];
  for (let i = 1; i < points.length - 1; i++) {
    const [before, corner, after] = [points[i - 1]!, points[i]!, points[i + 1]!];
    const into = Math.min(CORNER, Math.hypot(corner.x - before.x, corner.y - before.y) / 2);
    const out = Math.min(CORNER, Math.hypot(after.x - corner.x, after.y - corner.y) / 2);
    const toward = (from: Point, to: Point, by: number): Point => {
      const length = Math.hypot(to.x - from.x, to.y - from.y) || 1;
      return { x: from.x + ((to.x - from.x) / length) * by, y: from.y + ((to.y - from.y) / length) * by };
    };
    const a = toward(corner, before, into);
    const b = toward(corner, after, out);
    commands.push(`L${a.x},${a.y}`, `Q${corner.x},${corner.y} ${b.x},${b.y}`);
  }
  const last = points[points.length - 1]!;
  commands.push(`L${last.x},${last.y}`);
  return commands.join(" ");
}

/**
 * A return drawn as a return: down out of the body's last node, out to a
 * lane right of the body, up the lane, and into the loop's right-hand
 * return handle, dashed (braid-edge--back), so it never reads as forward flow.
 */
export const ReturnEdge = memo(function ReturnEdge(props: EdgeProps<Edge<ReturnEdgeData>>) {
  const { sourceX, sourceY, targetX, targetY } = props;
  const lane = Math.max(props.data?.lane ?? sourceX, sourceX + 24, targetX + 24);
  const drop = sourceY + 18;
  const points = [
    { x: sourceX, y: sourceY },
    { x: sourceX, y: drop },
    { x: lane, y: drop },
    { x: lane, y: targetY },
    { x: targetX, y: targetY },
  ];
  return (
    <BaseEdge
      path={orthogonalPath(points)}
      labelX={lane}
      labelY={(drop + targetY) / 2}
      label={props.label}
      labelStyle={props.labelStyle}
      labelShowBg={props.labelShowBg}
      labelBgStyle={props.labelBgStyle}
      labelBgPadding={props.labelBgPadding}
      labelBgBorderRadius={props.labelBgBorderRadius}
      markerEnd={props.markerEnd}
      style={props.style}
    />
  );
});
