import { Handle, type NodeProps, Position } from "@xyflow/react";
import { COLOR_CUES, type Color, colorClass } from "../graph/colors";
import { type BraidFlowNode, type BraidNodeData, RETURN_HANDLE } from "../graph/toFlow";
import { Ports } from "./Ports";

export type BraidNodeProps = NodeProps<BraidFlowNode>;

/** The shape family of a node, as a CSS modifier: `braid-node--<family>`. */
export type NodeFamily =
  | "terminal"
  | "step"
  | "decision"
  | "parallel"
  | "iteration"
  | "pause"
  | "boundary";

interface NodeFrameProps {
  data: BraidNodeData;
  family: NodeFamily;
  /** Edges arrive at the top; false for `start`. */
  hasInput?: boolean;
  /** Edges leave from the bottom; false for `end` and `fail`. */
  hasOutput?: boolean;
  /** A body's back edge enters on the right (foreach, loop, race). */
  hasReturn?: boolean;
}

function StatusBadge({ color }: { color: Color }) {
  const cue = COLOR_CUES[color];
  return (
    <span className="braid-node__status">
      <span aria-hidden="true">{cue.icon}</span> {cue.text}
    </span>
  );
}

/** The designer's validation badge: an icon and a word, never color alone. */
function ProblemBadge({ problem }: { problem: "error" | "warning" }) {
  return (
    <span className={`braid-node__problem braid-node__problem--${problem}`}>
      <span aria-hidden="true">{problem === "error" ? "✖" : "⚠"}</span> {problem}
    </span>
  );
}

/**
 * The box every node kind draws: id, kind summary, optional title and status.
 * All of it is rendered as React text children, never as HTML.
 */
export function NodeFrame({ data, family, hasInput = true, hasOutput = true, hasReturn = false }: NodeFrameProps) {
  const classes = ["braid-node", `braid-node--${family}`, `braid-node--${data.kind}`];
  if (data.color !== undefined) {
    classes.push(colorClass(data.color));
  }
  if (data.ports !== undefined) classes.push("braid-node--ports");
  if (data.editable === true) classes.push("braid-node--editable");
  if (data.problem !== undefined) classes.push(`braid-node--problem-${data.problem}`);
  if (data.change !== undefined) classes.push(`braid-node--change-${data.change}`);
  const tooltip = [data.label, data.summary, data.title, data.reason, data.problemText]
    .filter(Boolean)
    .join("\n");
  const reasonId = data.reason === undefined ? undefined : `braid-reason-${data.label}`;
  const ported = data.ports !== undefined;
  return (
    <div className={classes.join(" ")} title={tooltip} aria-describedby={reasonId}>
      {ported && <Ports data={data} />}
      {!ported && hasInput && <Handle type="target" position={Position.Top} isConnectable={false} />}
      {!ported && hasReturn && (
        <Handle type="target" id={RETURN_HANDLE} position={Position.Right} isConnectable={false} />
      )}
      <div className="braid-node__id">{data.label}</div>
      <div className="braid-node__summary">{data.summary}</div>
      {data.title !== undefined && <div className="braid-node__title">{data.title}</div>}
      {data.color !== undefined && <StatusBadge color={data.color} />}
      {data.reason !== undefined && (
        <span id={reasonId} role="tooltip" className="braid-node__reason">
          {data.reason}
        </span>
      )}
      {data.problem !== undefined && <ProblemBadge problem={data.problem} />}
      {data.change !== undefined && <span className="braid-node__change">{data.change}</span>}
      {!ported && hasOutput && <Handle type="source" position={Position.Bottom} isConnectable={false} />}
    </div>
  );
}
