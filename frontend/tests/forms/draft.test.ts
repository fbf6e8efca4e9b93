import { expect, test } from "vitest";
import { readDraft, startDraft, switchMode } from "../../src/forms/draft";
import { formFields } from "../../src/forms/model";
import { INVOICE } from "./schema";

const FIELDS = formFields(INVOICE);

test("a flow with input fields starts on the form; one without starts on JSON `{}`", () => {
  expect(startDraft(INVOICE).mode).toBe("form");
  expect(startDraft(INVOICE).text).toBe('{\n  "copies": 1,\n  "urgent": false,\n  "currency": "EUR",\n  "lines": []\n}');
  expect(startDraft(undefined)).toEqual({ mode: "json", values: { fields: {}, rest: {} }, text: "{}" });
});

test("form to JSON to form keeps every value", () => {
  const draft = startDraft(INVOICE);
  draft.values.fields.vendor = "Acme";
  draft.values.fields.lines = [{ sku: "A", qty: "4" }];
  const json = switchMode(FIELDS, draft);
  if ("errors" in json) throw new Error("expected a draft");
  expect(json.mode).toBe("json");
  expect(JSON.parse(json.text)).toEqual({ vendor: "Acme", copies: 1, urgent: false, currency: "EUR", lines: [{ sku: "A", qty: 4 }] });
  const back = switchMode(FIELDS, { ...json, text: json.text.replace('"Acme"', '"Acme & Co"') });
  if ("errors" in back) throw new Error("expected a draft");
  expect(back.mode).toBe("form");
  expect(back.values.fields.vendor).toBe("Acme & Co");
  expect(back.values.fields.lines).toEqual([{ sku: "A", qty: "4" }]);
});

test("a switch that would lose or misread something is refused with the reason at its path", () => {
  const draft = startDraft(INVOICE);
  expect(switchMode(FIELDS, { ...draft, mode: "json", text: "[1]" })).toEqual({ errors: { "": 'The input must be a JSON object, like {"amount": 120}.' } });
  expect(switchMode(FIELDS, { ...draft, mode: "json", text: '{"urgent": 1}' })).toEqual({
    errors: { urgent: "holds 1, which the form cannot show; fix it in JSON" },
  });
  draft.values.fields.amount = "lots";
  expect(switchMode(FIELDS, draft)).toEqual({ errors: { amount: "must be a number" } });
});

test("reading a JSON draft parses it; bad JSON says so for the input as a whole", () => {
  expect(readDraft(FIELDS, { mode: "json", values: { fields: {}, rest: {} }, text: ' {"a": 1} ' })).toEqual({ value: { a: 1 } });
  const bad = readDraft(FIELDS, { mode: "json", values: { fields: {}, rest: {} }, text: "{a" });
  expect(Object.keys(bad)).toEqual(["errors"]);
  expect((("errors" in bad ? bad.errors[""] : "") ?? "").startsWith("The input is not valid JSON: ")).toBe(true);
});
