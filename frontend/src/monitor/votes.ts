/** How the inspector words one vote at an approval (pure). */

import type { Color } from "../graph/colors";
import type { Vote } from "./types";

/** Return the decision in words and the color whose icon marks it: Approved ✓, Rejected ✕. */
export function voteVerdict(vote: Vote): { text: "Approved" | "Rejected"; color: Color } {
  return vote.decision === "approve" ? { text: "Approved", color: "completed" } : { text: "Rejected", color: "failed" };
}

/** Return who voted and for which groups: "dana (finance)", "sam (finance, legal)", "lee". */
export function voteWho(vote: Vote): string {
  return vote.groups.length === 0 ? vote.user : `${vote.user} (${vote.groups.join(", ")})`;
}

/**
 * Return the votes to show for a node: those of its row's decision, only while the row is
 * completed. A row that waits again (the next round of a loop) has no decision yet, and a
 * delta never removes the last round's votes, so they are not shown for it.
 */
export function shownVotes(rowStatus: string | undefined, votes: readonly Vote[] | undefined): readonly Vote[] {
  return rowStatus === "completed" && votes !== undefined ? votes : [];
}
