import { Handle, type NodeProps, Position } from "@xyflow/react";
import { useContext } from "react";
import { COLOR_CUES, type Color, colorClass } from "../graph/colors";
import { reasonPlain } from "../graph/reason";
import { type BraidFlowNode, type BraidNodeData, RETURN_HANDLE } from "../graph/toFlow";
import { Ports } from "./Ports";
import { ReasonText } from "./ReasonText";
import { SubflowToggle } from "./SubflowToggle";

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

/** A subflow's open/close button: a real button, so Tab reaches it and Enter or Space presses it. */
function SubflowButton({ path, steps, expanded }: { path: string; steps: number; expanded: boolean }) {
  const toggle = useContext(SubflowToggle);
  if (toggle === null) return null;
  const what = `${steps} step${steps === 1 ? "" : "s"}`;
  return (
    <button
      type="button"
      className="braid-node__expand nodrag nopan"
      aria-expanded={expanded}
      aria-label={`${expanded ? "Hide" : "Show"} the ${what} of subflow ${path}`}
      onClick={(event) => {
        event.stopPropagation();
        toggle(path);
      }}
    >
      <span aria-hidden="true">{expanded ? "▾" : "▸"}</span> {expanded ? "hide" : "show"} {what}
    </button>
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
  if (data.subflow?.expanded === true) classes.push("braid-node--expanded");
  const reason = data.reason === undefined ? undefined : reasonPlain(data.reason);
  const tooltip = [data.path ?? data.label, data.summary, data.title, reason, data.problemText]
    .filter(Boolean)
    .join("\n");
  const path = data.path ?? data.label;
  const reasonId = data.reason === undefined ? undefined : `braid-reason-${path}`;
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
      {data.subflow !== undefined && <SubflowButton path={path} {...data.subflow} />}
      {data.reason !== undefined && (
        <span id={reasonId} role="tooltip" className="braid-node__reason">
          <ReasonText reason={data.reason} />
        </span>
      )}
      {data.problem !== undefined && <ProblemBadge problem={data.problem} />}
      {data.change !== undefined && <span className="braid-node__change">{data.change}</span>}
      {!ported && hasOutput && <Handle type="source" position={Position.Bottom} isConnectable={false} />}
    </div>
  );
}
