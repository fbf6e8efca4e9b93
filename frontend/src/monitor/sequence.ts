/**
 * Message sequencing for the run sockets (HELPERS.md "The live layer"): every message
 * carries an increasing per-connection `seq`; a snapshot starts a fresh count; a gap
 * means a message was lost and the client must ask for a new snapshot.
 */

export type Verdict = "apply" | "resync" | "ignore";

export interface Sequenced {
  type: string;
  seq: number;
}

/** Tracks the last applied `seq` of one connection. */
export class Sequencer {
  private last: number | null = null;
  private awaitingSnapshot: boolean;

  /** `needsSnapshot`: true when nothing but a snapshot may be applied first (the run socket). */
  constructor(private readonly needsSnapshot = false) {
    this.awaitingSnapshot = needsSnapshot;
  }

  /** Decide what to do with a message: apply it, ask for a resync (a gap), or drop it (stale). */
  accept(message: Sequenced): Verdict {
    if (!Number.isInteger(message.seq)) {
      return "ignore";
    }
    if (message.type === "snapshot") {
      this.last = message.seq;
      this.awaitingSnapshot = false;
      return "apply";
    }
    if (this.awaitingSnapshot) {
      return "ignore";
    }
    if (this.last !== null && message.seq <= this.last) {
      return "ignore";
    }
    if (this.last !== null && message.seq !== this.last + 1) {
      this.awaitingSnapshot = this.needsSnapshot;
      this.last = message.seq;
      return "resync";
    }
    this.last = message.seq;
    return "apply";
  }

  /** Forget everything: a new connection counts from its own start. */
  reset(): void {
    this.last = null;
    this.awaitingSnapshot = this.needsSnapshot;
  }
}

/** Delay before reconnect attempt `attempt` (0-based): 1 s, 2 s, 4 s … capped at `maxMs`. */
export function backoffDelay(attempt: number, maxMs = 15_000): number {
  return Math.min(1000 * 2 ** Math.max(attempt, 0), maxMs);
}

/** Close codes after which reconnecting cannot help, with what to tell the person. */
export const FINAL_CLOSE_CODES: Readonly<Record<number, string>> = {
  4401: "You are logged out: log in again to follow this run live.",
  4403: "You may not follow this run live.",
  4404: "There is no such run.",
};
