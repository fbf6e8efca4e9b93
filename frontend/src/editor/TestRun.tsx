/**
 * The designer's test run: run the draft as drawn (unsaved edits included) in the
 * server's in-process runtime on sample input, storing nothing, and color the canvas
 * with the monitor's colors and reasons. A run that waits for approvals offers to decide
 * each one; every decision re-runs the draft with the decisions so far, in order.
 */
import { useState } from "react";
import { type InputDraft, readDraft, startDraft } from "../forms/draft";
import { formFields } from "../forms/model";
import { InputEditor } from "../forms/SchemaForm";
import type { Color } from "../graph/colors";
import type { GraphDocument } from "../graph/types";
import { ApiError, api, errorText, flowPath } from "./api";

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

/** Return the 400's per-field refusals of the input (`run.input`), or null for any other error. */
export function inputRefusals(error: unknown): Record<string, string> | null {
  if (!(error instanceof ApiError) || error.body.code !== "run.input") return null;
  const fields = error.body.fields;
  if (typeof fields !== "object" || fields === null) return null;
  return Object.fromEntries(Object.entries(fields as Record<string, unknown>).map(([path, why]) => [path, String(why)]));
}

export function TestRunPanel(props: {
  slug: string;
  doc: GraphDocument;
  onResult: (result: TestResult | null) => void;
  onClose: () => void;
}) {
  const { slug, doc, onResult, onClose } = props;
  const schema = (doc as { input?: unknown }).input;
  const fields = formFields(schema);
  const [draft, setDraft] = useState<InputDraft>(() => startDraft(schema));
  const [inputErrors, setInputErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState("");
  const [running, setRunning] = useState(false);
  const [decisions, setDecisions] = useState<Decision[]>([]);
  const [result, setResult] = useState<TestResult | null>(null);

  async function run(taken: Decision[]) {
    const parsed = readDraft(fields, draft);
    if ("errors" in parsed) {
      setInputErrors(parsed.errors);
      return;
    }
    setInputErrors({});
    setError("");
    setRunning(true);
    try {
      const answer = await api<TestResult>("POST", flowPath(slug, "test-run/"), { input: parsed.value, graph: doc, decisions: taken });
      setDecisions(taken);
      setResult(answer);
      onResult(answer);
    } catch (problem) {
      const refused = inputRefusals(problem);
      if (refused !== null) setInputErrors(refused);
      setError(refused !== null ? "The input does not match the flow's input schema; see the fields." : errorText(problem));
      onResult(null);
    } finally {
      setRunning(false);
    }
  }

  return (
    <section className="braid-banner braid-testrun" aria-label="Test run">
      <div className="braid-testrun__row">
        <h2 className="braid-testrun__title">
          <strong>Test run</strong> on the draft as drawn; nothing is stored
        </h2>
        <button type="button" onClick={onClose} aria-label="Close the test run">
          ✕
        </button>
      </div>
      <InputEditor fields={fields} draft={draft} onDraft={setDraft} errors={inputErrors} prefix="braid-testrun" rows={4} />
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
