/**
 * The flow's input fields in the Flow panel: what a run is started with. Thin: every edit is
 * a function of designer/inputSchema.ts, which keeps the keywords it does not show.
 */

import { useState } from "react";
import {
  addField,
  fieldNameProblem,
  INPUT_TYPES,
  type InputType,
  type Json,
  parseDefault,
  parseOptions,
  removeField,
  renameField,
  type SchemaField,
  schemaFields,
  setDefault,
  setOptions,
  setRequired,
  setType,
} from "../designer/inputSchema";
import { SelectField, TextField } from "./fields";

interface Props {
  schema: Json | undefined;
  readOnly: boolean;
  onChange: (schema: Json) => void;
}

function typeOptions(field: SchemaField, nested: boolean) {
  const options = INPUT_TYPES.filter((t) => !(nested && t.value === "rows"));
  return field.type === "other" ? [{ value: "other", label: "kept as written" }, ...options] : options;
}

function defaultText(field: SchemaField): string {
  if (field.default === undefined) return "";
  return typeof field.default === "string" && field.type !== "other" ? field.default : JSON.stringify(field.default);
}

/** The default's control: a select for yes/no and choices, typed text otherwise. */
function DefaultField({ field, label, readOnly, onSet }: { field: SchemaField; label: string; readOnly: boolean; onSet: (value: Json | undefined) => void }) {
  if (field.type === "boolean" || field.type === "enum") {
    const choices: Json[] = field.type === "boolean" ? [true, false] : field.options;
    const index = choices.findIndex((c) => JSON.stringify(c) === JSON.stringify(field.default));
    return (
      <SelectField
        label={label}
        value={index < 0 ? "" : String(index)}
        disabled={readOnly}
        options={[
          { value: "", label: "(none)" },
          ...choices.map((c, i) => ({ value: String(i), label: field.type === "boolean" ? (c ? "yes" : "no") : typeof c === "string" ? c : JSON.stringify(c) })),
        ]}
        onChange={(value) => onSet(value === "" ? undefined : choices[Number(value)])}
      />
    );
  }
  return (
    <TextField
      label={label}
      value={defaultText(field)}
      disabled={readOnly}
      placeholder={field.type === "date" ? "YYYY-MM-DD" : "none"}
      check={(text) => {
        const read = parseDefault(field.type, text);
        return "error" in read ? read.error : null;
      }}
      onCommit={(text) => {
        const read = parseDefault(field.type, text);
        if ("value" in read) onSet(read.value);
      }}
    />
  );
}

/** One input field: name, type, required, default, a choice's options, a table's own fields. */
function FieldRow({ schema, field, path, readOnly, onChange }: Props & { field: SchemaField; path: string[] }) {
  const name = path.join(".");
  const nested = path.length > 1;
  return (
    <li className="braid-input-field" aria-label={`Input field ${name}`}>
      <div className="braid-input-field__row">
        <TextField
          label={nested ? `Column name (${name})` : "Field name"}
          mono
          value={field.name}
          disabled={readOnly}
          check={(text) => fieldNameProblem(schema, [...path.slice(0, -1), text.trim()])}
          onCommit={(text) => onChange(renameField(schema, path, text.trim()))}
        />
        <SelectField
          label={`Type of ${name}`}
          value={field.type}
          disabled={readOnly}
          options={typeOptions(field, nested)}
          onChange={(type) => onChange(setType(schema, path, type as InputType))}
        />
        <label className="braid-check braid-input-field__required">
          <input type="checkbox" checked={field.required} disabled={readOnly} onChange={(event) => onChange(setRequired(schema, path, event.target.checked))} /> Required
        </label>
        {field.type !== "rows" && <DefaultField field={field} label={`Default of ${name}`} readOnly={readOnly} onSet={(value) => onChange(setDefault(schema, path, value))} />}
        {!readOnly && (
          <button type="button" className="braid-input-field__remove" aria-label={`Remove input field ${name}`} onClick={() => onChange(removeField(schema, path))}>
            ✕
          </button>
        )}
      </div>
      {field.type === "enum" && (
        <TextField
          label={`Options of ${name} (comma-separated)`}
          value={field.options.map((o) => (typeof o === "string" ? o : JSON.stringify(o))).join(", ")}
          disabled={readOnly}
          check={(text) => (parseOptions(text).length === 0 ? "Give at least one option." : null)}
          onCommit={(text) => onChange(setOptions(schema, path, parseOptions(text)))}
        />
      )}
      {field.type === "rows" && (
        <fieldset className="braid-list braid-input-fields__columns">
          <legend>Fields of each {field.name} row</legend>
          <FieldList schema={schema} fields={field.columns} prefix={path} readOnly={readOnly} onChange={onChange} />
        </fieldset>
      )}
    </li>
  );
}

/** A list of fields with an Add box under it. */
function FieldList({ schema, fields, prefix, readOnly, onChange }: Props & { fields: SchemaField[]; prefix: string[] }) {
  const [name, setName] = useState("");
  const [type, setNewType] = useState<InputType>("string");
  const [refusal, setRefusal] = useState<string | null>(null);
  const where = prefix.length === 0 ? "input field" : `${prefix.join(".")} column`;
  const add = () => {
    const path = [...prefix, name.trim()];
    const problem = fieldNameProblem(schema, path);
    setRefusal(problem);
    if (problem !== null) return;
    onChange(addField(schema, path, type));
    setName("");
  };
  return (
    <>
      {fields.length === 0 && <p className="braid-empty">{prefix.length === 0 ? "No input fields: a run starts with any JSON object. Add one below." : "No fields yet."}</p>}
      <ol className="braid-input-fields__list">
        {fields.map((field) => (
          <FieldRow key={field.name} schema={schema} field={field} path={[...prefix, field.name]} readOnly={readOnly} onChange={onChange} />
        ))}
      </ol>
      {!readOnly && (
        <div className="braid-list__add braid-input-fields__add">
          <input
            className="braid-input"
            aria-label={`New ${where}`}
            placeholder={`new ${where}`}
            value={name}
            onChange={(event) => setName(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === "Enter") {
                event.preventDefault();
                add();
              }
            }}
          />
          <select className="braid-input" aria-label={`Type of the new ${where}`} value={type} onChange={(event) => setNewType(event.target.value as InputType)}>
            {INPUT_TYPES.filter((t) => !(prefix.length > 0 && t.value === "rows")).map((t) => (
              <option key={t.value} value={t.value}>
                {t.label}
              </option>
            ))}
          </select>
          <button type="button" onClick={add}>
            Add
          </button>
        </div>
      )}
      {refusal !== null && (
        <div className="braid-field__problem braid-field__problem--error" role="alert">
          {refusal}
        </div>
      )}
    </>
  );
}

/** The Flow panel's "Input fields": the flow's `input` schema as a list of fields. */
export function InputFieldsEditor({ schema, readOnly, onChange }: Props) {
  return (
    <fieldset className="braid-list braid-input-fields">
      <legend>Input fields</legend>
      <p className="braid-field__hint">What a run starts with. The start form and the test run show these as a form.</p>
      <FieldList schema={schema} fields={schemaFields(schema)} prefix={[]} readOnly={readOnly} onChange={onChange} />
    </fieldset>
  );
}
