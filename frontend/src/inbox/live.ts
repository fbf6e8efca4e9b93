/**
 * The inbox count over `/ws/inbox/`: `{"type":"count","seq":n,"open":k}` messages with an
 * increasing per-connection seq. A gap asks for a resync; a dropped socket reconnects
 * with a growing delay (1 s … 30 s). Pure of the DOM so that it can be tested.
 */

export interface CountMessage {
  type: "count";
  seq: number;
  open: number;
}

/** Return the message when it is a well-formed count message, else null. */
export function parseCountMessage(text: string): CountMessage | null {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof data !== "object" || data === null) return null;
  const { type, seq, open } = data as Record<string, unknown>;
  if (type !== "count" || !Number.isInteger(seq) || !Number.isInteger(open)) return null;
  if ((open as number) < 0) return null;
  return { type, seq: seq as number, open: open as number };
}

/** Tracks the seq of one connection: `accept` says whether a message follows the last one. */
export class SeqTracker {
  private last = 0;

  /** Return "ok" for the next message, "gap" when some were missed, "stale" for an old one. */
  accept(seq: number): "ok" | "gap" | "stale" {
    if (seq <= this.last) return "stale";
    const gap = this.last !== 0 && seq !== this.last + 1;
    this.last = seq;
    return gap ? "gap" : "ok";
  }

  reset(): void {
    this.last = 0;
  }
}

/** Return the delay before reconnect attempt `attempt` (0-based), in milliseconds. */
export function reconnectDelay(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5));
}

/** Return the websocket URL of a path on the page's own host (ws: or wss:). */
export function socketUrl(location: { protocol: string; host: string }, path: string): string {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${path}`;
}

export const COUNT_EVENT = "braid:inbox-count";

/**
 * Keep calling `onCount` with the open count from `/ws/inbox/`, reconnecting as needed.
 * Return a function that stops.
 */
export function followInboxCount(
  onCount: (open: number) => void,
  makeSocket: (url: string) => WebSocket = (url) => new WebSocket(url),
): () => void {
  let attempt = 0;
  let stopped = false;
  let socket: WebSocket | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const seq = new SeqTracker();

  const connect = (): void => {
    if (stopped) return;
    seq.reset();
    socket = makeSocket(socketUrl(window.location, "/ws/inbox/"));
    socket.onopen = () => {
      attempt = 0;
    };
    socket.onmessage = (event: MessageEvent) => {
      const message = parseCountMessage(String(event.data));
      if (message === null) return;
      const verdict = seq.accept(message.seq);
      if (verdict === "stale") return;
      if (verdict === "gap") socket?.send(JSON.stringify({ type: "resync" }));
      onCount(message.open);
    };
    socket.onclose = (event: CloseEvent) => {
      socket = null;
      if (stopped || event.code === 4401) return; // logged out: the page will say so
      timer = setTimeout(connect, reconnectDelay(attempt++));
    };
  };
  connect();
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
    socket?.close();
  };
}
