import { Handle, Position } from "@xyflow/react";
import type { BraidNodeData, NodePort } from "../graph/toFlow";

/** Where a handle sits along its side, as a CSS percentage: its own `at`, else spread evenly. */
function spread(port: NodePort, index: number, count: number): string {
  return `${(port.at ?? (index + 1) / (count + 1)) * 100}%`;
}

function portTitle(port: NodePort, side: "in" | "out", gather: boolean): string {
  if (side === "out") return `Outcome handle “${port.label}”: drag to connect`;
  if (!gather) return "Input: drop a connection here";
  const feeds = port.feeds ?? 0;
  if (feeds === 0) return `Slot “${port.label}”: nothing arrives yet (all slots are needed: AND)`;
  if (feeds === 1) return `Slot “${port.label}”: one edge arrives`;
  return `Slot “${port.label}”: ${feeds} alternative edges (OR); any one fills it`;
}

/**
 * The designer's labelled handles: targets along the top (one per slot on a
 * gather, labelled, with OR shown where several edges feed one slot), a
 * return on the right, outcome and branch handles along the bottom.
 */
export function Ports({ data }: { data: BraidNodeData }) {
  const ports = data.ports!;
  const gather = data.kind === "gather";
  const connectable = data.editable === true;
  return (
    <>
      {ports.targets.map((port, index) => {
        const left = spread(port, index, ports.targets.length);
        const feeds = port.feeds ?? 0;
        const title = portTitle(port, "in", gather);
        return (
          <span key={port.id}>
            <Handle
              type="target"
              id={port.id}
              position={Position.Top}
              style={{ left }}
              isConnectable={connectable}
              className={gather ? `braid-port braid-port--slot${feeds === 0 ? " braid-port--empty" : ""}` : "braid-port"}
              role="img"
              aria-label={title}
              title={title}
            />
            {gather && (
              <span className={`braid-port__label braid-port__label--top${feeds === 0 ? " braid-port__label--empty" : ""}`} style={{ left }} title={title}>
                {port.label}
                {feeds > 1 && <span className="braid-port__or"> OR×{feeds}</span>}
              </span>
            )}
          </span>
        );
      })}
      {gather && ports.targets.length > 1 && <span className="braid-port__and" aria-hidden="true">AND</span>}
      {ports.hasReturn && (
        <Handle
          type="target"
          id="return"
          position={Position.Right}
          isConnectable={connectable}
          className="braid-port braid-port--return"
          role="img"
          aria-label="Return: the body comes back here"
          title="Return: the body comes back here"
        />
      )}
      {ports.sources.map((port, index) => {
        const left = spread(port, index, ports.sources.length);
        const title = portTitle(port, "out", gather);
        const labelled = !(ports.sources.length === 1 && port.label === "next");
        return (
          <span key={port.id}>
            <Handle
              type="source"
              id={port.id}
              position={Position.Bottom}
              style={{ left }}
              isConnectable={connectable}
              className="braid-port braid-port--out"
              role="img"
              aria-label={title}
              title={title}
            />
            {labelled && (
              <span className="braid-port__label braid-port__label--bottom" style={{ left }}>
                {port.label}
              </span>
            )}
          </span>
        );
      })}
    </>
  );
}
