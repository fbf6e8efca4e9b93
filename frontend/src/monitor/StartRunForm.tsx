/** Start a run of a published flow: pick the flow, fill in its input, POST /api/runs/.
 *
 * A flow that declares an `input` schema gets a typed form (raw JSON behind a toggle);
 * one that does not takes JSON. A refusal's `fields` go beside the fields they name.
 *
 * Each start is sent with an Idempotency-Key that changes only when the flow or the input
 * does: trying again after an answer was lost opens the run the first try started. */

import { type FormEvent, useId, useState } from "react";
import { idempotencyKey, postJson } from "./api";
import { type InputDraft, readDraft, startDraft } from "../forms/draft";
import { formFields } from "../forms/model";
import { InputEditor } from "../forms/SchemaForm";
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
  const [draft, setDraft] = useState<InputDraft>(() => startDraft(start?.input));
  const [errors, setErrors] = useState<StartErrors>({});
  const [inputErrors, setInputErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [key, setKey] = useState(idempotencyKey);
  const id = useId();
  const chosen = flows.find((flow) => flow.slug === slug);
  const fields = formFields(chosen?.input);

  function choose(next: string) {
    setSlug(next);
    setDraft(startDraft(flows.find((flow) => flow.slug === next)?.input));
    setKey(idempotencyKey());
    setErrors({});
    setInputErrors({});
  }

  function edit(next: InputDraft) {
    setDraft(next);
    setKey(idempotencyKey());
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    const parsed = readDraft(fields, draft);
    if ("errors" in parsed) {
      setErrors({});
      setInputErrors(parsed.errors);
      return;
    }
    setBusy(true);
    setErrors({});
    setInputErrors({});
    try {
      const body = { flow: slug, input: parsed.value };
      const run = (await postJson("/api/runs/", body, { "Idempotency-Key": key })) as { id: string };
      window.location.assign(`/runs/${run.id}/`);
    } catch (error) {
      const refused = startErrors(error);
      setErrors(refused);
      setInputErrors(Object.fromEntries(refused.fields ?? []));
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
      <h3 className="start-run__input" id={`${id}-input-title`}>
        Input
      </h3>
      <p className="hint" id={`${id}-hint`}>
        {fields.length === 0
          ? "This flow declares no input fields; any JSON object is accepted."
          : fields.some((field) => field.required)
            ? "Fields marked * are required; empty optional fields are left out."
            : "Empty fields are left out of the input."}
      </p>
      {errors.input !== undefined && (
        <p className="error field-error" id={`${id}-input-error`}>
          {errors.input}
        </p>
      )}
      <InputEditor key={slug} fields={fields} draft={draft} onDraft={edit} errors={inputErrors} prefix={`${id}-in`} />
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
