/**
 * The typed input form (thin: the rules are in ./model and ./draft). `InputEditor` shows a
 * flow's input as a form built from its `input` schema, with raw JSON behind an "advanced"
 * toggle, and puts each refusal beside the field it names.
 */

import { useState } from "react";
import { type InputDraft, switchMode } from "./draft";
import { type FieldValue, type FormField, type FormValues, type RowValues, newRow, placeErrors } from "./model";
import "./forms.css";

type Errors = Record<string, string>;

function inputId(prefix: string, path: string): string {
  return `${prefix}-${path.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

/** The required mark: a visible `*`, and "(required)" for screen readers. */
function RequiredMark() {
  return (
    <>
      <span className="form-field__required" aria-hidden="true" title="required">
        {" "}
        *
      </span>
      <span className="visually-hidden"> (required)</span>
    </>
  );
}

/** A field's label: its title, a required mark, and its description as a hint. */
function Label({ field, id }: { field: FormField; id: string }) {
  return (
    <label htmlFor={id} className="form-field__label">
      {field.label}
      {field.required && <RequiredMark />}
    </label>
  );
}

interface InputProps {
  field: FormField;
  id: string;
  value: FieldValue | undefined;
  error: string | undefined;
  describedBy: string | undefined;
  onChange: (value: FieldValue) => void;
}

/** The control for one scalar field: text, number, date, checkbox, select, or JSON text. */
function Control({ field, id, value, error, describedBy, onChange }: InputProps) {
  const common = {
    id,
    "aria-invalid": error !== undefined,
    "aria-describedby": describedBy,
    "aria-required": field.required,
  };
  const text = typeof value === "string" ? value : "";
  switch (field.kind) {
    case "boolean":
      return <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} />;
    case "enum":
      return (
        <select {...common} value={text} onChange={(e) => onChange(e.target.value)}>
          {(text === "" || !field.required) && <option value="">{field.required ? "Choose…" : "(none)"}</option>}
          {(field.options ?? []).map((option, index) => (
            <option key={index} value={String(index)}>
              {typeof option === "string" ? option : JSON.stringify(option)}
            </option>
          ))}
        </select>
      );
    case "json":
      return <textarea {...common} className="form-field__json" rows={3} spellCheck={false} value={text} onChange={(e) => onChange(e.target.value)} />;
    case "date":
      return <input {...common} type="date" value={text} onChange={(e) => onChange(e.target.value)} />;
    default: {
      const numeric = field.kind === "number" || field.kind === "integer";
      const inputMode = field.kind === "integer" ? "numeric" : numeric ? "decimal" : undefined;
      return <input {...common} type="text" inputMode={inputMode} value={text} onChange={(e) => onChange(e.target.value)} />;
    }
  }
}

/** One field with its label, hint and error, the error beside the control. */
function Field(props: { field: FormField; path: string; prefix: string; value: FieldValue | undefined; errors: Errors; onChange: (value: FieldValue) => void }) {
  const { field, path, prefix, value, errors, onChange } = props;
  const id = inputId(prefix, path);
  const error = errors[path];
  const describedBy = [field.description ? `${id}-hint` : "", error !== undefined ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  if (field.kind === "rows") {
    return <Rows field={field} path={path} prefix={prefix} rows={Array.isArray(value) ? value : []} errors={errors} onChange={onChange} />;
  }
  if (field.kind === "group") {
    const group = typeof value === "object" && !Array.isArray(value) ? value : {};
    return <Group field={field} path={path} prefix={prefix} values={group} errors={errors} onChange={onChange} />;
  }
  return (
    <div className={`form-field form-field--${field.kind}`}>
      {field.kind === "boolean" ? (
        <span className="form-field__check">
          <Control field={field} id={id} value={value} error={error} describedBy={describedBy} onChange={onChange} />
          <Label field={field} id={id} />
        </span>
      ) : (
        <>
          <Label field={field} id={id} />
          <Control field={field} id={id} value={value} error={error} describedBy={describedBy} onChange={onChange} />
        </>
      )}
      {field.description && (
        <span className="form-field__hint" id={`${id}-hint`}>
          {field.description}
        </span>
      )}
      {error !== undefined && (
        <span className="form-field__error" id={`${id}-error`}>
          {error}
        </span>
      )}
    </div>
  );
}

/** An object's fields under its name, each with its own error. */
function Group(props: { field: FormField; path: string; prefix: string; values: RowValues; errors: Errors; onChange: (values: RowValues) => void }) {
  const { field, path, prefix, values, errors, onChange } = props;
  const id = inputId(prefix, path);
  const error = errors[path];
  return (
    <fieldset className="form-rows form-group" aria-describedby={error !== undefined ? `${id}-error` : undefined}>
      <legend>
        {field.label}
        {field.required && <RequiredMark />}
      </legend>
      {field.description && <span className="form-field__hint">{field.description}</span>}
      <div className="form-group__fields">
        {(field.columns ?? []).map((column) => (
          <Field key={column.name} field={column} path={`${path}.${column.name}`} prefix={prefix} value={values[column.name]} errors={errors} onChange={(value) => onChange({ ...values, [column.name]: value })} />
        ))}
      </div>
      {error !== undefined && (
        <span className="form-field__error" id={`${id}-error`}>
          {error}
        </span>
      )}
    </fieldset>
  );
}

/** An array of objects as rows of fields (line items), with Add row and Remove per row. */
function Rows(props: { field: FormField; path: string; prefix: string; rows: RowValues[]; errors: Errors; onChange: (rows: RowValues[]) => void }) {
  const { field, path, prefix, rows, errors, onChange } = props;
  const columns = field.columns ?? [];
  const id = inputId(prefix, path);
  const error = errors[path];
  const edit = (index: number, name: string, value: FieldValue) => onChange(rows.map((row, i) => (i === index ? { ...row, [name]: value } : row)));
  return (
    <fieldset className="form-rows" aria-describedby={error !== undefined ? `${id}-error` : undefined}>
      <legend>
        {field.label}
        {field.required && <RequiredMark />}
        <span className="form-rows__count"> ({rows.length === 1 ? "1 row" : `${rows.length} rows`})</span>
      </legend>
      {field.description && <span className="form-field__hint">{field.description}</span>}
      {rows.length === 0 && <p className="form-rows__empty">No rows yet. Add one.</p>}
      {rows.map((row, index) => (
        <div className="form-rows__row" key={index} role="group" aria-label={`${field.label} row ${index + 1}`}>
          {columns.map((column) => (
            <Field key={column.name} field={column} path={`${path}.${index}.${column.name}`} prefix={prefix} value={row[column.name]} errors={errors} onChange={(value) => edit(index, column.name, value)} />
          ))}
          <button type="button" className="secondary form-rows__remove" onClick={() => onChange(rows.filter((_, i) => i !== index))} aria-label={`Remove ${field.label} row ${index + 1}`}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" className="secondary" onClick={() => onChange([...rows, newRow(columns)])}>
        Add row
      </button>
      {error !== undefined && (
        <span className="form-field__error" id={`${id}-error`}>
          {error}
        </span>
      )}
    </fieldset>
  );
}

/** The form's fields, each beside its own error. */
export function SchemaFields(props: { fields: FormField[]; values: FormValues; errors: Errors; prefix: string; onChange: (values: FormValues) => void }) {
  const { fields, values, errors, prefix, onChange } = props;
  return (
    <div className="form-fields">
      {fields.map((field) => (
        <Field
          key={field.name}
          field={field}
          path={field.name}
          prefix={prefix}
          value={values.fields[field.name]}
          errors={errors}
          onChange={(value) => onChange({ ...values, fields: { ...values.fields, [field.name]: value } })}
        />
      ))}
    </div>
  );
}

interface InputEditorProps {
  fields: FormField[];
  draft: InputDraft;
  onDraft: (draft: InputDraft) => void;
  /** Messages by input path (`lines.0.sku`; "" or `(input)` for the input as a whole). */
  errors: Errors;
  prefix: string;
  /** Rows of the JSON text area. */
  rows?: number;
}

/** The input as a form (when the schema has fields) or as JSON, with the toggle between them. */
export function InputEditor({ fields, draft, onDraft, errors, prefix, rows }: InputEditorProps) {
  const [switchErrors, setSwitchErrors] = useState<Errors>({});
  const placed = placeErrors(fields, draft.values, { ...errors, ...switchErrors });
  const whole = placed.general.filter(([path]) => path === "" || path === "(input)").map(([, reason]) => reason);
  const others = placed.general.filter(([path]) => path !== "" && path !== "(input)");
  // In JSON mode no field is on screen: every refusal is listed under the text.
  const listed = [...others, ...(draft.mode === "json" ? Object.entries(placed.byPath) : [])];
  function toggle() {
    const next = switchMode(fields, draft);
    if ("errors" in next) {
      setSwitchErrors(next.errors);
      return;
    }
    setSwitchErrors({});
    onDraft(next);
  }
  function edit(next: InputDraft) {
    setSwitchErrors({});
    onDraft(next);
  }
  const messageId = `${prefix}-input-error`;
  return (
    <div className="input-editor">
      {fields.length > 0 && (
        <div className="input-editor__mode">
          <button type="button" className="secondary input-editor__toggle" aria-pressed={draft.mode === "json"} onClick={toggle}>
            {draft.mode === "form" ? "Edit as JSON (advanced)" : "Back to the form"}
          </button>
        </div>
      )}
      {draft.mode === "form" ? (
        <SchemaFields fields={fields} values={draft.values} errors={placed.byPath} prefix={prefix} onChange={(values) => edit({ ...draft, values })} />
      ) : (
        <textarea
          id={`${prefix}-json`}
          className="json-editor input-editor__json"
          aria-label="Input (JSON)"
          value={draft.text}
          rows={rows ?? Math.min(16, Math.max(5, draft.text.split("\n").length + 1))}
          spellCheck={false}
          onChange={(e) => edit({ ...draft, text: e.target.value })}
          aria-invalid={whole.length > 0 || listed.length > 0}
          aria-describedby={whole.length > 0 || listed.length > 0 ? messageId : undefined}
        />
      )}
      {(whole.length > 0 || listed.length > 0) && (
        <div className="form-field__error input-editor__errors" id={messageId} role="alert">
          {whole.map((reason) => (
            <p key={reason}>{reason}</p>
          ))}
          {listed.length > 0 && (
            <ul>
              {listed.map(([path, reason]) => (
                <li key={path}>
                  <code>{path}</code>: {reason}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}
