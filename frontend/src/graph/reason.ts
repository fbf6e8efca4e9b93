/**
 * Reasons as the server writes them (docs/monitor-states.md, "Reasons in people's words"):
 * node ids between backticks. Split into plain and code parts for rendering as text
 * and <code> elements, never as HTML.
 */

/** One run of a reason: plain text, or a node id (or other value) marked as code. */
export interface ReasonPart {
  code: boolean;
  text: string;
}

/** A code span: a backtick, one or more characters that are not backticks, a backtick. */
const CODE_SPAN = /`([^`]+)`/g;

/**
 * Return a reason's parts in order: "Not taken: `big` chose `false`" → text "Not taken: ",
 * code "big", text " chose ", code "false". A backtick with no partner, and an empty pair
 * (``), stay in the plain text as written.
 */
export function reasonParts(reason: string): ReasonPart[] {
  const parts: ReasonPart[] = [];
  let last = 0;
  for (const match of reason.matchAll(CODE_SPAN)) {
    if (match.index > last) parts.push({ code: false, text: reason.slice(last, match.index) });
    parts.push({ code: true, text: match[1]! });
    last = match.index + match[0].length;
  }
  if (last < reason.length) parts.push({ code: false, text: reason.slice(last) });
  return parts;
}

/** Return a reason as plain words for a title or an ARIA label: the code spans without their backticks. */
export function reasonPlain(reason: string): string {
  return reasonParts(reason)
    .map((part) => part.text)
    .join("");
}
