/**
 * The designer's test run: run the draft as drawn (unsaved edits included) in the
 * server's in-process runtime on sample input, storing nothing, and color the canvas
 * with the monitor's colors and reasons. A run that waits for approvals offers to decide
 * each one; every decision re-runs the draft with the decisions so far, in order.
 */
import { useState } from "react";
import type { Color } from "../graph/colors";
import type { GraphDocument } from "../graph/types";
import { api, errorText, flowPath } from "./api";

export interface TestResult {
  status: string;
  error: string | null;
  state: Record<string, unknown>;
  colors: Record<string, Color>;
  reasons: Record<string, string>;
  waiting_on: string[];
  refused: { node: string; detail: string }[];
}

type Decision = { node: string; decision: "approve" | "reject" };

/** Return a sample input from the graph's declared input schema: each property's example. */
export function sampleInput(doc: GraphDocument): string {
  const schema = (doc as { input?: { properties?: Record<string, { type?: string }> } }).input;
  const sample: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema?.properties ?? {})) {
    sample[name] =
      { string: "", number: 0, integer: 0, boolean: false, array: [], object: {} }[field.type ?? ""] ?? null;
  }
  return JSON.stringify(sample, null, 2);
}

export function TestRunPanel(props: {
  slug: string;
  doc: GraphDocument;
  onResult: (result: TestResult | null) => void;
  onClose: () => void;
}) {
  const { slug, doc, onResult, onClose } = props;
  const [input, setInput] = useState(() => sampleInput(doc));
  const [inputError, setInputError] = useState("");
  const [error, setError] = useState("");
  const [running, setRunning] = useState(false);
  const [decisions, setDecisions] = useState<Decision[]>([]);
  const [result, setResult] = useState<TestResult | null>(null);

  async function run(taken: Decision[]) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(input);
    } catch (problem) {
      setInputError(`Not JSON: ${(problem as Error).message}`);
      return;
    }
    setInputError("");
    setError("");
    setRunning(true);
    try {
      const answer = await api<TestResult>("POST", flowPath(slug, "test-run/"), { input: parsed, graph: doc, decisions: taken });
      setDecisions(taken);
      setResult(answer);
      onResult(answer);
    } catch (problem) {
      setError(errorText(problem));
      onResult(null);
    } finally {
      setRunning(false);
    }
  }

  return (
    <section className="braid-banner braid-testrun" aria-label="Test run">
      <div className="braid-testrun__row">
        <label htmlFor="braid-testrun-input">
          <strong>Test run</strong> input (JSON), run on the draft as drawn; nothing is stored
        </label>
        <button type="button" onClick={onClose} aria-label="Close the test run">
          ✕
        </button>
      </div>
      <textarea
        id="braid-testrun-input"
        className="braid-testrun__input"
        rows={4}
        value={input}
        onChange={(event) => setInput(event.target.value)}
        aria-invalid={inputError !== ""}
        aria-describedby={inputError ? "braid-testrun-input-error" : undefined}
        spellCheck={false}
      />
      {inputError && (
        <p id="braid-testrun-input-error" className="braid-field-error" role="alert">
          {inputError}
        </p>
      )}
      <div className="braid-testrun__row">
        <button type="button" className="braid-primary" disabled={running} onClick={() => void run([])}>
          {running ? "Running…" : decisions.length > 0 ? "Run again from the start" : "Run"}
        </button>
        {result !== null && (
          <span role="status" aria-live="polite">
            The run is <strong>{result.status}</strong>
            {result.error ? `: ${result.error}` : ""}
            {decisions.length > 0 ? ` after ${decisions.length} decision(s)` : ""}. The canvas shows its colors; hover a
            node for the reason.
          </span>
        )}
      </div>
      {error && (
        <p className="braid-field-error" role="alert">
          {error}
        </p>
      )}
      {result !== null && result.waiting_on.length > 0 && (
        <ul className="braid-testrun__decisions" aria-label="Approvals waiting">
          {result.waiting_on.map((node) => (
            <li key={node}>
              <code>{node}</code> waits for a decision:{" "}
              <button type="button" disabled={running} onClick={() => void run([...decisions, { node, decision: "approve" }])}>
                Approve
              </button>{" "}
              <button type="button" disabled={running} onClick={() => void run([...decisions, { node, decision: "reject" }])}>
                Reject
              </button>
            </li>
          ))}
        </ul>
      )}
      {result !== null && result.refused.length > 0 && (
        <p className="braid-field-error">
          Refused: {result.refused.map((r) => `${r.node}: ${r.detail}`).join("; ")}
        </p>
      )}
      {result !== null && (
        <details>
          <summary>Final state</summary>
          <pre className="braid-testrun__state">{JSON.stringify(result.state, null, 2)}</pre>
        </details>
      )}
    </section>
  );
}
