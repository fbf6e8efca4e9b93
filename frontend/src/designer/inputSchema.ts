/**
 * Editing a flow's `input` JSON Schema as a list of fields: name, type, required, default,
 * an enum's options, and a line-item table's own fields (one level deep).
 *
 * Every edit works on the schema itself and touches only the keys it is about, so keywords
 * the designer does not show (`minimum`, `description`, `additionalProperties`, `$comment`, …)
 * stay exactly as they were. A field is addressed by its path: `["amount"]`, or
 * `["lines", "sku"]` for a column of the `lines` table.
 */

import { kindOf } from "../forms/model";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = { [key: string]: Json };

export type InputType = "string" | "number" | "integer" | "boolean" | "enum" | "date" | "rows" | "other";

export const INPUT_TYPES: { value: InputType; label: string }[] = [
  { value: "string", label: "text" },
  { value: "number", label: "number" },
  { value: "integer", label: "whole number" },
  { value: "boolean", label: "yes/no" },
  { value: "enum", label: "choice" },
  { value: "date", label: "date" },
  { value: "rows", label: "line items" },
];

export interface SchemaField {
  name: string;
  type: InputType;
  required: boolean;
  default: Json | undefined;
  /** A choice's options. */
  options: Json[];
  /** A line-item table's fields. */
  columns: SchemaField[];
}

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const KIND_TYPES: Record<string, InputType> = { text: "string", json: "other", group: "other" };

/** Return the editor's type of a property schema. */
export function inputType(property: Json | undefined): InputType {
  if (!isSchema(property)) return "other";
  const kind = kindOf(property, false);
  return (KIND_TYPES[kind] ?? kind) as InputType;
}

/** Return the fields an object schema declares, in order (none for a schema without properties). */
export function schemaFields(schema: Json | undefined, nested = false): SchemaField[] {
  if (!isSchema(schema) || !isSchema(schema.properties)) return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(schema.properties).map(([name, property]) => {
    const type = inputType(property);
    const shown: InputType = nested && type === "rows" ? "other" : type;
    const record = isSchema(property) ? property : {};
    return {
      name,
      type: shown,
      required: required.has(name),
      default: record.default,
      options: Array.isArray(record.enum) ? record.enum : [],
      columns: shown === "rows" && isSchema(record.items) ? schemaFields(record.items, true) : [],
    };
  });
}

/** Return the object schema a path's field sits in (the root, or a table's `items`). */
function holder(root: Schema, path: string[]): Schema {
  let current = root;
  for (const name of path.slice(0, -1)) {
    const property = isSchema(current.properties) ? current.properties[name] : undefined;
    if (!isSchema(property) || !isSchema(property.items)) throw new Error(`${name} is not a line-item field`);
    current = property.items;
  }
  return current;
}

/** Apply a change to a copy of the schema's object at the path's holder. */
function edit(schema: Json | undefined, path: string[], change: (object: Schema, name: string) => void): Schema {
  const root: Schema = isSchema(schema) ? (structuredClone(schema) as Schema) : { type: "object", properties: {} };
  const object = holder(root, path);
  if (!isSchema(object.properties)) object.properties = {};
  change(object, path[path.length - 1] ?? "");
  return root;
}

/** Return a reason the name cannot be a new field next to its siblings, or null. */
export function fieldNameProblem(schema: Json | undefined, path: string[]): string | null {
  const name = path[path.length - 1] ?? "";
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return "A field name starts with a letter or _ and has letters, digits and _.";
  const siblings = schemaFields(path.length > 1 ? holderOf(schema, path) : schema);
  return siblings.some((f) => f.name === name) ? `${name} is already a field.` : null;
}

function holderOf(schema: Json | undefined, path: string[]): Json | undefined {
  try {
    return isSchema(schema) ? holder(schema, path) : undefined;
  } catch {
    return undefined;
  }
}

/** Return the schema keywords of a type (`choice` starts with one option). */
export function typeSchema(type: InputType, options: Json[] = []): Schema {
  switch (type) {
    case "date":
      return { type: "string", format: "date" };
    case "enum":
      return { type: "string", enum: options.length > 0 ? options : ["option 1"] };
    case "rows":
      return { type: "array", items: { type: "object", properties: {} } };
    case "other":
      return {};
    default:
      return { type };
  }
}

/** Return the schema with a new field of that type added last. */
export function addField(schema: Json | undefined, path: string[], type: InputType): Schema {
  return edit(schema, path, (object, name) => {
    (object.properties as Schema)[name] = typeSchema(type);
  });
}

const TYPE_KEYS = ["type", "format", "enum", "items", "properties", "default"];

/** Return the schema with the field's type changed; its other keywords (title, bounds, …) stay. */
export function setType(schema: Json | undefined, path: string[], type: InputType): Schema {
  return edit(schema, path, (object, name) => {
    const properties = object.properties as Schema;
    const old = isSchema(properties[name]) ? properties[name] : {};
    const options = Array.isArray(old.enum) ? old.enum : [];
    const kept = Object.fromEntries(Object.entries(old).filter(([key]) => !TYPE_KEYS.includes(key)));
    properties[name] = { ...kept, ...typeSchema(type, options) };
  });
}

/** Return the schema with the field renamed in place (order and `required` kept). */
export function renameField(schema: Json | undefined, path: string[], to: string): Schema {
  return edit(schema, path, (object, name) => {
    const properties = object.properties as Schema;
    object.properties = Object.fromEntries(Object.entries(properties).map(([key, value]) => [key === name ? to : key, value]));
    if (Array.isArray(object.required)) object.required = object.required.map((r) => (r === name ? to : r));
  });
}

/** Return the schema without the field (and without it in `required`). */
export function removeField(schema: Json | undefined, path: string[]): Schema {
  return edit(schema, path, (object, name) => {
    const properties = object.properties as Schema;
    object.properties = Object.fromEntries(Object.entries(properties).filter(([key]) => key !== name));
    if (Array.isArray(object.required)) setRequiredList(object, object.required.filter((r) => r !== name));
  });
}

function setRequiredList(object: Schema, names: Json[]): void {
  if (names.length > 0) object.required = names;
  else delete object.required;
}

/** Return the schema with the field required or not. */
export function setRequired(schema: Json | undefined, path: string[], required: boolean): Schema {
  return edit(schema, path, (object, name) => {
    const list = (Array.isArray(object.required) ? object.required : []).filter((r) => r !== name);
    const order = Object.keys(object.properties as Schema);
    setRequiredList(object, required ? [...list, name].sort((a, b) => order.indexOf(String(a)) - order.indexOf(String(b))) : list);
  });
}

/** Return the schema with the field's default set (undefined: no default). */
export function setDefault(schema: Json | undefined, path: string[], value: Json | undefined): Schema {
  return edit(schema, path, (object, name) => {
    const property = (object.properties as Schema)[name];
    if (!isSchema(property)) return;
    if (value === undefined) delete property.default;
    else property.default = value;
  });
}

/** Return the schema with a choice's options replaced (a default no longer offered is dropped). */
export function setOptions(schema: Json | undefined, path: string[], options: Json[]): Schema {
  return edit(schema, path, (object, name) => {
    const property = (object.properties as Schema)[name];
    if (!isSchema(property)) return;
    property.enum = options;
    const kept = options.some((o) => JSON.stringify(o) === JSON.stringify(property.default));
    if ("default" in property && !kept) delete property.default;
  });
}

/** Read a default typed as text for a field's type: the value, or why it does not read. */
export function parseDefault(type: InputType, text: string): { value: Json | undefined } | { error: string } {
  if (text.trim() === "") return { value: undefined };
  if (type === "number" || type === "integer") {
    const number = Number(text.trim());
    if (!Number.isFinite(number)) return { error: "Give a number, e.g. 0 or 12.5." };
    if (type === "integer" && !Number.isInteger(number)) return { error: "Give a whole number." };
    return { value: number };
  }
  if (type === "date" && !/^\d{4}-\d{2}-\d{2}$/.test(text.trim())) return { error: "Give a date as YYYY-MM-DD." };
  if (type === "rows" || type === "other") {
    try {
      return { value: JSON.parse(text) as Json };
    } catch {
      return { error: "Give a JSON value." };
    }
  }
  return { value: type === "date" ? text.trim() : text };
}

/** Read a choice's options from comma-separated text (blank entries dropped). */
export function parseOptions(text: string): string[] {
  return [...new Set(text.split(",").map((o) => o.trim()).filter((o) => o !== ""))];
}
