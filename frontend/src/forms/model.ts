/**
 * A typed form for a flow's `input` JSON Schema (CONTRACT §1), as pure data.
 *
 * `formFields` reads the schema into a list of fields; `initialValues`, `valuesFromJson` and
 * `jsonFromValues` move between what the inputs hold (text as typed) and the JSON the server
 * takes; `placeErrors` puts the 400's `fields` beside the field they name. Nothing here
 * compiles a schema at run time (the page's CSP forbids eval): the server validates.
 * docs/forms.md says why this is written here rather than taken from a library.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, unknown>;

export type FieldKind = "text" | "number" | "integer" | "boolean" | "enum" | "date" | "rows" | "group" | "json";

export interface FormField {
  /** The property name; `path` is where it sits in the input (`lines.0.amount` in a row). */
  name: string;
  label: string;
  kind: FieldKind;
  required: boolean;
  description: string;
  /** The schema's `default`, if it has one. */
  default?: Json;
  /** An enum's options, in the schema's order. */
  options?: Json[];
  /** A row's fields, for `rows` (an array of objects), or a `group`'s (an object); one level deep. */
  columns?: FormField[];
}

/** What an input holds: text as typed, a checkbox's boolean, a table's rows, a group's fields. */
export type FieldValue = string | boolean | RowValues[] | RowValues;
export interface RowValues {
  [name: string]: FieldValue;
}

/** The form's values by field name; `rest` keeps input members the schema does not name. */
export interface FormValues {
  fields: Record<string, FieldValue>;
  rest: Record<string, Json>;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function typeOf(schema: Schema): string | undefined {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  return typeof type === "string" ? type : undefined;
}

/** Return the kind of input that edits a property's value. */
export function kindOf(schema: Schema, nested: boolean): FieldKind {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return "enum";
  const type = typeOf(schema);
  if (type === "string") return schema.format === "date" ? "date" : "text";
  if (type === "number" || type === "integer" || type === "boolean") return type;
  const items = schema.items;
  if (type === "array" && !nested && isSchema(items) && typeOf(items) === "object" && isSchema(items.properties)) return "rows";
  if (type === "object" && !nested && isSchema(schema.properties) && Object.keys(schema.properties).length > 0) return "group";
  return "json";
}

/** Return the fields of an object schema, in the schema's order; a non-object reads as none. */
export function formFields(schema: unknown, nested = false): FormField[] {
  if (!isSchema(schema) || !isSchema(schema.properties)) return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(schema.properties).map(([name, raw]) => {
    const property = isSchema(raw) ? raw : {};
    const kind = kindOf(property, nested);
    const field: FormField = {
      name,
      label: typeof property.title === "string" && property.title !== "" ? property.title : name,
      kind,
      required: required.has(name),
      description: typeof property.description === "string" ? property.description : "",
    };
    if ("default" in property) field.default = property.default as Json;
    if (kind === "enum") field.options = property.enum as Json[];
    if (kind === "rows") field.columns = formFields((property.items as Schema), true);
    if (kind === "group") field.columns = formFields(property, true);
    return field;
  });
}

/** True when the schema declares an object input with at least one property. */
export function hasForm(schema: unknown): boolean {
  return formFields(schema).length > 0;
}

/** Return what an input shows for a JSON value (undefined: the field is left empty). */
export function fieldValue(field: FormField, value: Json | undefined): FieldValue {
  switch (field.kind) {
    case "boolean":
      return value === true;
    case "rows":
      return Array.isArray(value) ? value.map((row) => rowValues(field.columns ?? [], row)) : [];
    case "group":
      return rowValues(field.columns ?? [], value ?? {});
    case "enum": {
      const index = value === undefined ? -1 : (field.options ?? []).findIndex((o) => same(o, value));
      return index < 0 ? "" : String(index);
    }
    case "json":
      return value === undefined ? "" : JSON.stringify(value, null, 2);
    default:
      return value === undefined || value === null ? "" : String(value);
  }
}

function rowValues(columns: FormField[], row: Json): RowValues {
  const record = isSchema(row) ? (row as Record<string, Json>) : {};
  return Object.fromEntries(columns.map((column) => [column.name, fieldValue(column, record[column.name])]));
}

function same(a: Json, b: Json): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Return a new row for a table: each column's default, else empty. */
export function newRow(columns: FormField[]): RowValues {
  return Object.fromEntries(columns.map((column) => [column.name, fieldValue(column, column.default)]));
}

/** Return the values a fresh form starts with: each field's default, else empty. */
export function initialValues(fields: FormField[]): FormValues {
  return { fields: Object.fromEntries(fields.map((f) => [f.name, fieldValue(f, f.default)])), rest: {} };
}

/** Return the form's values for an input object; members the schema does not name go to `rest`. */
export function valuesFromJson(fields: FormField[], input: Record<string, Json>): FormValues {
  const named = new Set(fields.map((field) => field.name));
  const rest = Object.fromEntries(Object.entries(input).filter(([name]) => !named.has(name)));
  return { fields: Object.fromEntries(fields.map((f) => [f.name, fieldValue(f, input[f.name])])), rest };
}

/** The input built from a form: the value, and a message per path the form could not read. */
export interface Built {
  value: Record<string, Json>;
  errors: Record<string, string>;
}

/** Return the input object the form's values stand for; an empty optional field is left out. */
export function jsonFromValues(fields: FormField[], values: FormValues): Built {
  const errors: Record<string, string> = {};
  const value = { ...values.rest, ...readObject(fields, values.fields, "", errors) };
  return { value, errors };
}

function readObject(fields: FormField[], values: Record<string, FieldValue>, prefix: string, errors: Record<string, string>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const field of fields) {
    const read = readField(field, values[field.name], `${prefix}${field.name}`, errors);
    if (read !== undefined) out[field.name] = read;
  }
  return out;
}

/** Return one field's JSON (undefined: left out), or record why its text does not read. */
export function readField(field: FormField, value: FieldValue | undefined, path: string, errors: Record<string, string>): Json | undefined {
  if (field.kind === "boolean") return value === true;
  if (field.kind === "rows") {
    const rows = Array.isArray(value) ? value : [];
    return rows.map((row, index) => readObject(field.columns ?? [], row, `${path}.${index}.`, errors));
  }
  if (field.kind === "group") {
    const group = typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
    const read = readObject(field.columns ?? [], group, `${path}.`, errors);
    // An optional group left empty is left out; a required one is sent so its fields are named.
    return Object.keys(read).length === 0 && !field.required ? undefined : read;
  }
  const text = typeof value === "string" ? value : "";
  if (text.trim() === "") return undefined;
  switch (field.kind) {
    case "enum":
      return (field.options ?? [])[Number(text)] ?? null;
    case "number":
    case "integer":
      return readNumber(field.kind, text, path, errors);
    case "json":
      try {
        return JSON.parse(text) as Json;
      } catch {
        errors[path] = "is not valid JSON";
        return undefined;
      }
    default:
      return text;
  }
}

function readNumber(kind: "number" | "integer", text: string, path: string, errors: Record<string, string>): Json | undefined {
  const number = Number(text.trim());
  if (!Number.isFinite(number)) {
    errors[path] = "must be a number";
    return undefined;
  }
  if (kind === "integer" && !Number.isInteger(number)) {
    errors[path] = "must be a whole number";
    return undefined;
  }
  return number;
}

/** Where the 400's `fields` go: beside a field of the form (by path), or above the form. */
export interface PlacedErrors {
  byPath: Record<string, string>;
  general: [string, string][];
}

/** Return every path the form has an input for: fields, and each row's cells. */
export function formPaths(fields: FormField[], values: FormValues): Set<string> {
  const paths = new Set<string>();
  for (const field of fields) {
    paths.add(field.name);
    if (field.kind === "group") for (const column of field.columns ?? []) paths.add(`${field.name}.${column.name}`);
    const rows = values.fields[field.name];
    if (field.kind !== "rows" || !Array.isArray(rows)) continue;
    rows.forEach((_, index) => {
      for (const column of field.columns ?? []) paths.add(`${field.name}.${index}.${column.name}`);
    });
  }
  return paths;
}

/** Place each refusal (`lines.0.amount`: reason) beside its input; the rest goes above the form. */
export function placeErrors(fields: FormField[], values: FormValues, refused: Record<string, string>): PlacedErrors {
  const paths = formPaths(fields, values);
  const byPath: Record<string, string> = {};
  const general: [string, string][] = [];
  for (const [path, reason] of Object.entries(refused).sort(([a], [b]) => a.localeCompare(b))) {
    const row = /^(.+)\.(\d+)$/.exec(path);
    if (paths.has(path)) byPath[path] = reason;
    else if (row !== null && paths.has(row[1] ?? "")) byPath[row[1] ?? ""] = `row ${Number(row[2]) + 1} ${reason}`;
    else general.push([path, reason]);
  }
  return { byPath, general };
}

const SHOWN: Record<Exclude<FieldKind, "enum" | "rows" | "group" | "json">, (value: Json) => boolean> = {
  text: (value) => typeof value === "string",
  date: (value) => typeof value === "string",
  number: (value) => typeof value === "number",
  integer: (value) => typeof value === "number",
  boolean: (value) => typeof value === "boolean",
};

/** Return, by path, the values of an input that the form's inputs cannot hold as they are. */
export function formCannotShow(fields: FormField[], input: Record<string, Json>, prefix = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of fields) {
    const value = input[field.name];
    const path = `${prefix}${field.name}`;
    if (value === undefined || field.kind === "json") continue;
    if (field.kind === "group") {
      if (!isSchema(value)) out[path] = `holds ${JSON.stringify(value)}, which the form cannot show; fix it in JSON`;
      else Object.assign(out, formCannotShow(field.columns ?? [], value as Record<string, Json>, `${path}.`));
    } else if (field.kind === "rows") {
      if (!Array.isArray(value) || !value.every(isSchema)) out[path] = "is not a list of rows";
      else value.forEach((row, i) => Object.assign(out, formCannotShow(field.columns ?? [], row as Record<string, Json>, `${path}.${i}.`)));
    } else if (field.kind === "enum" ? !(field.options ?? []).some((o) => same(o, value)) : !SHOWN[field.kind](value)) {
      out[path] = `holds ${JSON.stringify(value)}, which the form cannot show; fix it in JSON`;
    }
  }
  return out;
}
