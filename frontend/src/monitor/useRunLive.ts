/** Follow one run: the REST tree first, then /ws/runs/<id>/ (snapshot, deltas, resync on a gap). */

import { useEffect, useRef, useState } from "react";
import { getJson, socketUrl } from "./api";
import { executionsOf, mergeExecutions, type ServerExecution } from "./executions";
import { applyDelta, pictureFrom } from "./picture";
import { backoffDelay, FINAL_CLOSE_CODES, Sequencer } from "./sequence";
import type { RunPicture, TraceEvent } from "./types";
import { isFinished } from "./types";

export interface LiveState {
  picture: RunPicture | null;
  /** The run's executions as the server derives them; null until they first arrive. */
  executions: ServerExecution[] | null;
  /** Why the executions could not be loaded, or "". */
  executionsError: string;
  /** "live", "connecting", "reconnecting", or a final message when following cannot work. */
  connection: string;
  error: string;
}

const POLL_MS = 3000;
/** Without pushed executions, the list is fetched again at most this often while the run changes. */
const EXECUTIONS_GAP_MS = 1000;

function failureText(failure: unknown): string {
  return failure instanceof Error ? failure.message : String(failure);
}

export function useRunLive(runId: string): LiveState {
  const [picture, setPicture] = useState<RunPicture | null>(null);
  const [connection, setConnection] = useState("connecting");
  const [error, setError] = useState("");
  const [executions, setExecutions] = useState<ServerExecution[] | null>(null);
  const [executionsError, setExecutionsError] = useState("");
  const finished = useRef(false);

  useEffect(() => {
    let stopped = false;
    let socket: WebSocket | null = null;
    let attempt = 0;
    let retry = 0;
    let poll = 0;
    const sequencer = new Sequencer(true);
    // Executions come in the socket's snapshot and deltas; a server that does not push them
    // (or no socket at all) has them fetched, again at most once a second while the run changes.
    let pushed = false;
    // Each fetch and each pushed list takes the next number: a fetch answered after a newer
    // list arrived is dropped.
    let generation = 0;
    let fetching = false;
    let fetchAgain = false;
    let lastFetchAt = Number.NEGATIVE_INFINITY;
    let fetchTimer = 0;
    const fetchExecutions = async (): Promise<void> => {
      if (fetching) {
        fetchAgain = true;
        return;
      }
      fetching = true;
      fetchAgain = false;
      lastFetchAt = Date.now();
      const mine = ++generation;
      try {
        const list = executionsOf(await getJson(`/api/runs/${runId}/executions/`));
        if (stopped || mine !== generation) return;
        if (list === null) throw new Error("the answer has no executions list");
        setExecutions(list);
        setExecutionsError("");
      } catch (failure) {
        if (!stopped && mine === generation) setExecutionsError(`Could not load the executions: ${failureText(failure)}`);
      } finally {
        fetching = false;
        if (fetchAgain && !stopped && !pushed) scheduleExecutions();
      }
    };
    const scheduleExecutions = () => {
      if (fetching) {
        fetchAgain = true;
        return;
      }
      if (fetchTimer !== 0) return;
      const wait = Math.max(0, lastFetchAt + EXECUTIONS_GAP_MS - Date.now());
      fetchTimer = window.setTimeout(() => {
        fetchTimer = 0;
        if (!stopped) void fetchExecutions();
      }, wait);
    };
    const pushedExecutions = (list: ServerExecution[], whole: boolean) => {
      generation++;
      setExecutions((current) => (whole || current === null ? list : mergeExecutions(current, list)));
      setExecutionsError("");
    };
    const fetchTree = async () => {
      if (!pushed) void fetchExecutions();
      try {
        const next = pictureFrom(await getJson(`/api/runs/${runId}/tree/`));
        if (!stopped) {
          setPicture(next);
          finished.current = isFinished(next.status);
          setError("");
        }
      } catch (failure) {
        if (!stopped) setError(`Could not load the run's tree: ${failureText(failure)}`);
      }
    };
    const startPolling = () => {
      if (poll === 0) poll = window.setInterval(() => void fetchTree(), POLL_MS);
    };
    const stopPolling = () => {
      window.clearInterval(poll);
      poll = 0;
    };
    const connect = () => {
      sequencer.reset();
      socket = new WebSocket(socketUrl(`/ws/runs/${runId}/`));
      socket.onopen = () => {
        attempt = 0;
        stopPolling();
        setConnection("live");
      };
      socket.onmessage = (message) => {
        let body: { type?: string; seq?: number };
        try {
          body = JSON.parse(String(message.data));
        } catch {
          return;
        }
        const verdict = sequencer.accept({ type: body.type ?? "", seq: body.seq ?? Number.NaN });
        if (verdict === "resync") {
          socket?.send(JSON.stringify({ type: "resync" }));
          return;
        }
        if (verdict !== "apply") return;
        const list = executionsOf(body);
        if (body.type === "snapshot") {
          setPicture(pictureFrom(body));
          pushed = list !== null;
          if (list !== null) pushedExecutions(list, true);
          else void fetchExecutions();
        } else if (body.type === "delta") {
          setPicture((current) => (current === null ? current : applyDelta(current, body)));
          if (list !== null) pushedExecutions(list, false);
          else if (!pushed) scheduleExecutions();
        }
      };
      socket.onclose = (event) => {
        if (stopped) return;
        const final = FINAL_CLOSE_CODES[event.code];
        if (final !== undefined) {
          setConnection(final);
          return;
        }
        pushed = false;
        void fetchTree();
        if (!finished.current) startPolling();
        const delay = backoffDelay(attempt++);
        setConnection(`reconnecting in ${Math.round(delay / 1000)} s`);
        retry = window.setTimeout(connect, delay);
      };
    };
    void fetchTree().then(() => {
      if (!stopped) connect();
    });
    return () => {
      stopped = true;
      window.clearTimeout(retry);
      window.clearTimeout(fetchTimer);
      stopPolling();
      socket?.close();
    };
  }, [runId]);

  useEffect(() => {
    if (picture !== null) finished.current = isFinished(picture.status);
  }, [picture]);

  return { picture, executions, executionsError, connection, error };
}

const TRACE_PAGE = 500;
const TRACE_MAX_PAGES = 20;

/** The run's trace, fetched in pages and then extended from where it stopped whenever `version` changes. */
export function useTrace(
  runId: string,
  version: unknown,
): { events: TraceEvent[]; truncated: boolean; error: string; ready: boolean } {
  const [events, setEvents] = useState<TraceEvent[]>([]);
  const [ready, setReady] = useState(false);
  const [truncated, setTruncated] = useState(false);
  const [error, setError] = useState("");
  const loaded = useRef<TraceEvent[]>([]);
  const busy = useRef(false);
  const again = useRef(false);
  const mounted = useRef(true);

  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  useEffect(() => {
    // One pull at a time; a change during a pull asks for one more pull after it, so the
    // last change is never lost (a finished run sends no further change to catch it up).
    const pull = async (): Promise<void> => {
      if (busy.current) {
        again.current = true;
        return;
      }
      busy.current = true;
      again.current = false;
      try {
        for (let page = 0; page < TRACE_MAX_PAGES; page++) {
          const offset = loaded.current.length;
          if (offset >= TRACE_PAGE * TRACE_MAX_PAGES) {
            if (mounted.current) setTruncated(true);
            break;
          }
          const body = (await getJson(`/api/runs/${runId}/trace/?limit=${TRACE_PAGE}&offset=${offset}`)) as {
            results: TraceEvent[];
            next: string | null;
          };
          loaded.current = [...loaded.current, ...body.results];
          if (body.next === null) break;
        }
        if (mounted.current) {
          setEvents(loaded.current);
          setReady(true);
          setError("");
        }
      } catch (failure) {
        if (mounted.current) setError(`Could not load the trace: ${failure instanceof Error ? failure.message : String(failure)}`);
      } finally {
        busy.current = false;
        if (again.current && mounted.current) {
          window.setTimeout(() => void pull(), 250);
        }
      }
    };
    const timer = window.setTimeout(() => void pull(), 150);
    return () => window.clearTimeout(timer);
  }, [runId, version]);

  return { events, truncated, error, ready };
}
