import { expect, test } from "vitest";
import {
  formCannotShow,
  formFields,
  initialValues,
  jsonFromValues,
  newRow,
  placeErrors,
  valuesFromJson,
} from "../../src/forms/model";
import { INVOICE } from "./schema";

const FIELDS = formFields(INVOICE);

test("a schema reads as one field per property, in order, with its kind, label, required mark and default", () => {
  expect(FIELDS.map((f) => [f.name, f.label, f.kind, f.required, f.default])).toEqual([
    ["vendor", "Vendor", "text", true, undefined],
    ["amount", "amount", "number", true, undefined],
    ["copies", "copies", "integer", false, 1],
    ["urgent", "urgent", "boolean", false, false],
    ["currency", "currency", "enum", false, "EUR"],
    ["due", "due", "date", false, undefined],
    ["lines", "lines", "rows", true, undefined],
    ["meta", "meta", "json", false, undefined],
  ]);
  expect(FIELDS[0]?.description).toBe("Who sent the invoice");
  expect(FIELDS[4]?.options).toEqual(["EUR", "USD"]);
  expect(FIELDS[6]?.columns?.map((c) => [c.name, c.kind, c.required, c.default])).toEqual([
    ["sku", "text", true, undefined],
    ["qty", "integer", false, 1],
  ]);
});

test("rows nest one level only: an array of objects inside a row is edited as JSON", () => {
  const schema = {
    type: "object",
    properties: { lines: { type: "array", items: { type: "object", properties: { parts: { type: "array", items: { type: "object", properties: { id: { type: "string" } } } } } } } },
  };
  expect(formFields(schema)[0]?.columns?.[0]?.kind).toBe("json");
  expect(formFields({ type: "object" })).toEqual([]);
  expect(formFields(null)).toEqual([]);
});

test("a fresh form holds the defaults and builds only what has a value", () => {
  const values = initialValues(FIELDS);
  expect(values.fields).toEqual({ vendor: "", amount: "", copies: "1", urgent: false, currency: "0", due: "", lines: [], meta: "" });
  expect(jsonFromValues(FIELDS, values)).toEqual({ value: { copies: 1, urgent: false, currency: "EUR", lines: [] }, errors: {} });
});

test("typed text becomes typed JSON: numbers, integers, enum options, dates, rows and raw JSON", () => {
  const values = initialValues(FIELDS);
  values.fields = {
    ...values.fields,
    vendor: "Acme",
    amount: " 120.5 ",
    currency: "1",
    due: "2026-12-31",
    lines: [{ ...newRow(FIELDS[6]?.columns ?? []), sku: "A-1" }, { sku: "B-2", qty: "3" }],
    meta: '{"po": 7}',
  };
  expect(jsonFromValues(FIELDS, values)).toEqual({
    value: {
      vendor: "Acme",
      amount: 120.5,
      copies: 1,
      urgent: false,
      currency: "USD",
      due: "2026-12-31",
      lines: [{ sku: "A-1", qty: 1 }, { sku: "B-2", qty: 3 }],
      meta: { po: 7 },
    },
    errors: {},
  });
});

test("text that does not read as its type is an error at its path, row cells included", () => {
  const values = initialValues(FIELDS);
  values.fields = { ...values.fields, amount: "12,5", copies: "1.5", lines: [{ sku: "A", qty: "two" }], meta: "{po" };
  expect(jsonFromValues(FIELDS, values).errors).toEqual({
    amount: "must be a number",
    copies: "must be a whole number",
    "lines.0.qty": "must be a number",
    meta: "is not valid JSON",
  });
});

test("JSON becomes form values and back unchanged, members the schema does not name included", () => {
  const input = {
    vendor: "Acme",
    amount: 99,
    copies: 2,
    urgent: true,
    currency: "USD",
    due: "2027-01-02",
    lines: [{ sku: "A", qty: 2 }],
    meta: { po: [1, 2] },
    note: "kept",
  };
  const values = valuesFromJson(FIELDS, input);
  expect(values.rest).toEqual({ note: "kept" });
  expect(values.fields.lines).toEqual([{ sku: "A", qty: "2" }]);
  expect(jsonFromValues(FIELDS, values)).toEqual({ value: input, errors: {} });
});

test("values the form cannot hold as they are are named, so a switch to the form loses nothing", () => {
  expect(formCannotShow(FIELDS, { amount: "12", urgent: "yes", currency: "GBP", lines: [{ sku: 4 }], meta: 3 })).toEqual({
    amount: 'holds "12", which the form cannot show; fix it in JSON',
    urgent: 'holds "yes", which the form cannot show; fix it in JSON',
    currency: 'holds "GBP", which the form cannot show; fix it in JSON',
    "lines.0.sku": "holds 4, which the form cannot show; fix it in JSON",
  });
  expect(formCannotShow(FIELDS, { lines: 3 })).toEqual({ lines: "is not a list of rows" });
});

test("the 400's fields go beside their input; a whole row's error to its table; the rest above the form", () => {
  const values = valuesFromJson(FIELDS, { lines: [{ sku: "A" }, { qty: 1 }] });
  const refused = {
    amount: "required, but missing",
    "lines.1.sku": "required, but missing",
    "lines.0": "must be an object",
    "(input)": "must be an object",
    extra: "is not a field of this input",
  };
  expect(placeErrors(FIELDS, values, refused)).toEqual({
    byPath: { amount: "required, but missing", "lines.1.sku": "required, but missing", lines: "row 1 must be an object" },
    general: [
      ["(input)", "must be an object"],
      ["extra", "is not a field of this input"],
    ],
  });
});

const SIGN_OFF = {
  type: "object",
  required: ["invoice"],
  properties: {
    invoice: {
      type: "object",
      required: ["id", "amount"],
      properties: { id: { type: "string" }, amount: { type: "number" }, vendor: { type: "string" }, extra: { type: "object", properties: { a: { type: "string" } } } },
    },
    memo: { type: "object", properties: { text: { type: "string" } } },
  },
};

test("an object with properties is a group of fields; inside it, objects are edited as JSON", () => {
  const fields = formFields(SIGN_OFF);
  expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
    ["invoice", "group", true],
    ["memo", "group", false],
  ]);
  expect(fields[0]?.columns?.map((c) => [c.name, c.kind, c.required])).toEqual([
    ["id", "text", true],
    ["amount", "number", true],
    ["vendor", "text", false],
    ["extra", "json", false],
  ]);
});

test("a group's fields build its object; an empty optional group is left out, a required one is sent", () => {
  const fields = formFields(SIGN_OFF);
  const values = initialValues(fields);
  expect(values.fields).toEqual({ invoice: { id: "", amount: "", vendor: "", extra: "" }, memo: { text: "" } });
  expect(jsonFromValues(fields, values)).toEqual({ value: { invoice: {} }, errors: {} });
  values.fields.invoice = { id: "I-9", amount: "x", vendor: "", extra: "" };
  expect(jsonFromValues(fields, values)).toEqual({ value: { invoice: { id: "I-9" } }, errors: { "invoice.amount": "must be a number" } });
  const input = { invoice: { id: "I-9", amount: 120, vendor: "ACME" }, memo: { text: "hi" } };
  expect(jsonFromValues(fields, valuesFromJson(fields, input))).toEqual({ value: input, errors: {} });
  expect(formCannotShow(fields, { invoice: { amount: "120" }, memo: 3 })).toEqual({
    "invoice.amount": 'holds "120", which the form cannot show; fix it in JSON',
    memo: "holds 3, which the form cannot show; fix it in JSON",
  });
  expect(placeErrors(fields, values, { "invoice.vendor": "required, but missing" }).byPath).toEqual({ "invoice.vendor": "required, but missing" });
});
