/** Start a run of a published flow: pick the flow, edit its input as JSON, POST /api/runs/.
 *
 * Each start is sent with an Idempotency-Key that changes only when the flow or the input
 * does: trying again after an answer was lost opens the run the first try started. */

import { type FormEvent, useId, useState } from "react";
import { idempotencyKey, postJson } from "./api";
import { inputTemplate, parseInput } from "./inputTemplate";
import { type StartErrors, startErrors } from "./startErrors";

export interface PublishedFlow {
  slug: string;
  name: string;
  version: number;
  input: unknown;
}

interface StartRunFormProps {
  flows: readonly PublishedFlow[];
  initialFlow: string;
  onClose: () => void;
}

/** The form; on 201 the browser opens the new run's view. */
export function StartRunForm({ flows, initialFlow, onClose }: StartRunFormProps) {
  const start = flows.find((flow) => flow.slug === initialFlow) ?? flows[0];
  const [slug, setSlug] = useState(start?.slug ?? "");
  const [text, setText] = useState(() => inputTemplate(start?.input));
  const [errors, setErrors] = useState<StartErrors>({});
  const [busy, setBusy] = useState(false);
  const [key, setKey] = useState(idempotencyKey);
  const id = useId();
  const chosen = flows.find((flow) => flow.slug === slug);

  function choose(next: string) {
    setSlug(next);
    setText(inputTemplate(flows.find((flow) => flow.slug === next)?.input));
    setKey(idempotencyKey());
    setErrors({});
  }

  function edit(next: string) {
    setText(next);
    setKey(idempotencyKey());
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    const parsed = parseInput(text);
    if ("error" in parsed) {
      setErrors({ input: parsed.error });
      return;
    }
    setBusy(true);
    setErrors({});
    try {
      const body = { flow: slug, input: parsed.value };
      const run = (await postJson("/api/runs/", body, { "Idempotency-Key": key })) as { id: string };
      window.location.assign(`/runs/${run.id}/`);
    } catch (error) {
      setErrors(startErrors(error));
      setBusy(false);
    }
  }

  if (flows.length === 0) {
    return (
      <div className="card start-run" role="region" aria-label="Start a run">
        <p>
          No published flow yet. Publish one from <a href="/flows/">Flows</a>, then start it here.
        </p>
        <button type="button" className="secondary" onClick={onClose}>
          Close
        </button>
      </div>
    );
  }
  return (
    <form className="card start-run" onSubmit={submit} aria-label="Start a run" noValidate>
      <h2>Start a run</h2>
      <label htmlFor={`${id}-flow`}>Flow</label>
      <select
        id={`${id}-flow`}
        value={slug}
        onChange={(event) => choose(event.target.value)}
        aria-invalid={errors.flow !== undefined}
        aria-describedby={errors.flow === undefined ? undefined : `${id}-flow-error`}
      >
        {flows.map((flow) => (
          <option key={flow.slug} value={flow.slug}>
            {flow.name} ({flow.slug} v{flow.version})
          </option>
        ))}
      </select>
      {errors.flow !== undefined && (
        <p className="error field-error" id={`${id}-flow-error`}>
          {errors.flow}
        </p>
      )}
      <label htmlFor={`${id}-input`}>Input (JSON)</label>
      <p className="hint" id={`${id}-hint`}>
        {chosen?.input === undefined || chosen.input === null
          ? "This flow declares no input fields; any JSON object is accepted."
          : "Prefilled with the fields the flow declares; fill in the values."}
      </p>
      <textarea
        id={`${id}-input`}
        className="json-editor"
        value={text}
        rows={Math.min(16, Math.max(5, text.split("\n").length + 1))}
        spellCheck={false}
        onChange={(event) => edit(event.target.value)}
        aria-invalid={errors.input !== undefined}
        aria-describedby={`${id}-hint${errors.input === undefined ? "" : ` ${id}-input-error`}`}
      />
      {errors.input !== undefined && (
        <div className="error field-error" id={`${id}-input-error`}>
          <p>{errors.input}</p>
          {errors.fields !== undefined && errors.fields.length > 0 && (
            <ul className="input-field-errors">
              {errors.fields.map(([path, reason]) => (
                <li key={path}>
                  <code>{path === "" ? "(the input)" : path}</code>: {reason}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      {errors.form !== undefined && (
        <p className="error" role="alert">
          {errors.form}
        </p>
      )}
      <div className="actions">
        <button type="submit" disabled={busy}>
          {busy ? "Starting…" : "Start run"}
        </button>
        <button type="button" className="secondary" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
