import { reasonParts } from "../graph/reason";

/**
 * A reason with its backticked node ids as <code>: each part is a React text child, so
 * whatever the reason says (a comment with markup in it) is shown as text, never as HTML.
 */
export function ReasonText({ reason }: { reason: string }) {
  return (
    <>
      {reasonParts(reason).map((part, index) => (part.code ? <code key={index}>{part.text}</code> : part.text))}
    </>
  );
}
