import { expect, test } from "vitest";
import {
  addField,
  fieldNameProblem,
  type Json,
  parseDefault,
  parseOptions,
  removeField,
  renameField,
  schemaFields,
  setDefault,
  setOptions,
  setRequired,
  setType,
} from "../../src/designer/inputSchema";

/** A schema with keywords the designer does not show, at the top, on fields and in a table. */
const RICH = {
  $comment: "kept",
  type: "object",
  additionalProperties: false,
  required: ["amount", "lines"],
  properties: {
    amount: { type: "number", minimum: 0, description: "in EUR", title: "Amount" },
    currency: { type: "string", enum: ["EUR", "USD"], default: "EUR" },
    lines: {
      type: "array",
      minItems: 1,
      items: { type: "object", required: ["sku"], additionalProperties: false, properties: { sku: { type: "string", maxLength: 12 } } },
    },
    meta: { type: "object", properties: { po: { type: "integer" } } },
  },
} as const satisfies Json;

const rich = () => structuredClone(RICH) as unknown as Json;

test("a schema reads as fields with type, required, default, options and a table's own fields", () => {
  expect(schemaFields(rich())).toEqual([
    { name: "amount", type: "number", required: true, default: undefined, options: [], columns: [] },
    { name: "currency", type: "enum", required: false, default: "EUR", options: ["EUR", "USD"], columns: [] },
    {
      name: "lines",
      type: "rows",
      required: true,
      default: undefined,
      options: [],
      columns: [{ name: "sku", type: "string", required: true, default: undefined, options: [], columns: [] }],
    },
    { name: "meta", type: "other", required: false, default: undefined, options: [], columns: [] },
  ]);
  expect(schemaFields(undefined)).toEqual([]);
});

test("adding a field to no schema makes an object schema; each type writes its keywords", () => {
  expect(addField(undefined, ["due"], "date")).toEqual({ type: "object", properties: { due: { type: "string", format: "date" } } });
  let schema = addField(undefined, ["kind"], "enum");
  schema = addField(schema, ["lines"], "rows");
  schema = addField(schema, ["lines", "qty"], "integer");
  expect(schema).toEqual({
    type: "object",
    properties: {
      kind: { type: "string", enum: ["option 1"] },
      lines: { type: "array", items: { type: "object", properties: { qty: { type: "integer" } } } },
    },
  });
});

test("every edit keeps the keywords it is not about, on the schema, the field and the table", () => {
  let schema: Json = rich();
  schema = setType(schema, ["amount"], "integer");
  schema = setRequired(schema, ["currency"], true);
  schema = setDefault(schema, ["amount"], 5);
  schema = renameField(schema, ["lines", "sku"], "code");
  schema = setOptions(schema, ["currency"], ["EUR", "USD", "GBP"]);
  schema = addField(schema, ["note"], "string");
  expect(schema).toEqual({
    $comment: "kept",
    type: "object",
    additionalProperties: false,
    required: ["amount", "currency", "lines"],
    properties: {
      amount: { type: "integer", minimum: 0, description: "in EUR", title: "Amount", default: 5 },
      currency: { type: "string", enum: ["EUR", "USD", "GBP"], default: "EUR" },
      lines: {
        type: "array",
        minItems: 1,
        items: { type: "object", required: ["code"], additionalProperties: false, properties: { code: { type: "string", maxLength: 12 } } },
      },
      meta: { type: "object", properties: { po: { type: "integer" } } },
      note: { type: "string" },
    },
  });
  expect(rich()).toEqual(RICH);
});

test("an edit undone by its opposite gives back the schema exactly", () => {
  const original = rich();
  expect(setRequired(setRequired(original, ["meta"], true), ["meta"], false)).toEqual(original);
  expect(renameField(renameField(original, ["amount"], "total"), ["total"], "amount")).toEqual(original);
  expect(setDefault(setDefault(original, ["amount"], 3), ["amount"], undefined)).toEqual(original);
  expect(Object.keys((renameField(original, ["amount"], "total") as { properties: object }).properties)).toEqual(["total", "currency", "lines", "meta"]);
});

test("removing a field drops it from required; a choice's dropped option takes its default along", () => {
  const schema = removeField(rich(), ["lines", "sku"]) as { properties: { lines: { items: object } } };
  expect(schema.properties.lines.items).toEqual({ type: "object", additionalProperties: false, properties: {} });
  expect((removeField(rich(), ["amount"]) as { required: string[] }).required).toEqual(["lines"]);
  expect((setOptions(rich(), ["currency"], ["USD"]) as { properties: { currency: object } }).properties.currency).toEqual({ type: "string", enum: ["USD"] });
});

test("a type change drops the old type's keywords and default, and keeps a choice's options", () => {
  const schema = setType(rich(), ["currency"], "string") as { properties: Record<string, object> };
  expect(schema.properties.currency).toEqual({ type: "string" });
  const back = setType(setType(rich(), ["amount"], "enum"), ["amount"], "number") as { properties: Record<string, object> };
  expect(back.properties.amount).toEqual({ minimum: 0, description: "in EUR", title: "Amount", type: "number" });
});

test("names, defaults and options are checked as typed", () => {
  expect(fieldNameProblem(rich(), ["amount"])).toBe("amount is already a field.");
  expect(fieldNameProblem(rich(), ["lines", "sku"])).toBe("sku is already a field.");
  expect(fieldNameProblem(rich(), ["lines", "qty"])).toBeNull();
  expect(fieldNameProblem(rich(), ["2x"])).toBe("A field name starts with a letter or _ and has letters, digits and _.");
  expect(parseDefault("integer", "2.5")).toEqual({ error: "Give a whole number." });
  expect(parseDefault("number", " 2.5 ")).toEqual({ value: 2.5 });
  expect(parseDefault("date", "31.12.2026")).toEqual({ error: "Give a date as YYYY-MM-DD." });
  expect(parseDefault("string", "")).toEqual({ value: undefined });
  expect(parseDefault("string", " a ")).toEqual({ value: " a " });
  expect(parseOptions(" EUR, USD,,EUR ")).toEqual(["EUR", "USD"]);
});
