import { BaseEdge, type EdgeProps } from "@xyflow/react";
import { memo } from "react";
import { middlePoint, smoothPath } from "../graph/path";
import type { BraidFlowEdge } from "../graph/toFlow";
import type { Point } from "../graph/types";

/**
 * An edge drawn along dagre's route, which bends around the nodes in between
 * instead of crossing them. A forward edge keeps its handles as end points; a
 * back edge uses dagre's ends too, since it climbs from the body's top to the
 * loop's bottom.
 */
export const RoutedEdge = memo(function RoutedEdge(props: EdgeProps<BraidFlowEdge>) {
  const route = props.data?.route ?? [];
  const points: Point[] = props.data?.back
    ? route
    : [{ x: props.sourceX, y: props.sourceY }, ...route.slice(1, -1), { x: props.targetX, y: props.targetY }];
  const label = middlePoint(points);
  return (
    <BaseEdge
      path={smoothPath(points)}
      labelX={label.x}
      labelY={label.y}
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
