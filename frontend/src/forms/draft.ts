/**
 * A run's input while it is being written: as a typed form, or as raw JSON (the "advanced"
 * toggle). Switching carries the input across both ways; reading returns the input object
 * or says what to fix, and where.
 */

import { type FormField, type FormValues, type Json, formCannotShow, formFields, initialValues, jsonFromValues, valuesFromJson } from "./model";

export type DraftMode = "form" | "json";

export interface InputDraft {
  mode: DraftMode;
  values: FormValues;
  text: string;
}

/** A draft read: the input object, or messages by path ("" for the input as a whole). */
export type DraftRead = { value: Record<string, Json> } | { errors: Record<string, string> };

/** Return a new draft for a schema: the form with its defaults, or `{}` as JSON without fields. */
export function startDraft(schema: unknown): InputDraft {
  const fields = formFields(schema);
  const values = initialValues(fields);
  const text = JSON.stringify(jsonFromValues(fields, values).value, null, 2);
  return { mode: fields.length > 0 ? "form" : "json", values, text };
}

/** Parse JSON text into an input object, or say what is wrong with it. */
export function parseObject(text: string): { value: Record<string, Json> } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() === "" ? "{}" : text);
  } catch (error) {
    return { error: `The input is not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { error: 'The input must be a JSON object, like {"amount": 120}.' };
  }
  return { value: value as Record<string, Json> };
}

/** Return the draft's input object, or the messages that say what to fix. */
export function readDraft(fields: FormField[], draft: InputDraft): DraftRead {
  if (draft.mode === "json") {
    const parsed = parseObject(draft.text);
    return "error" in parsed ? { errors: { "": parsed.error } } : parsed;
  }
  const built = jsonFromValues(fields, draft.values);
  return Object.keys(built.errors).length > 0 ? { errors: built.errors } : { value: built.value };
}

/** Return the draft in the other mode with the same input, or the messages that stop the switch. */
export function switchMode(fields: FormField[], draft: InputDraft): InputDraft | { errors: Record<string, string> } {
  const read = readDraft(fields, draft);
  if ("errors" in read) return read;
  if (draft.mode === "form") return { ...draft, mode: "json", text: JSON.stringify(read.value, null, 2) };
  const unshown = formCannotShow(fields, read.value);
  if (Object.keys(unshown).length > 0) return { errors: unshown };
  return { ...draft, mode: "form", values: valuesFromJson(fields, read.value) };
}
