import { expect, test } from "vitest";
import { exampleOf, inputTemplate, parseInput } from "../../src/monitor/inputTemplate";

test("the template lists every declared property with its default, first enum value or an empty value", () => {
  const schema = {
    type: "object",
    required: ["amount"],
    properties: {
      amount: { type: "number" },
      vendor: { type: "string" },
      urgent: { type: "boolean", default: true },
      currency: { enum: ["EUR", "USD"] },
      lines: { type: "array", items: { type: "object" } },
      address: { type: "object", properties: { city: { type: "string" } } },
      count: { type: "integer" },
    },
  };
  expect(JSON.parse(inputTemplate(schema))).toEqual({
    amount: 0,
    vendor: "",
    urgent: true,
    currency: "EUR",
    lines: [],
    address: { city: "" },
    count: 0,
  });
});

test("a flow that declares no input starts from an empty object", () => {
  expect(inputTemplate(null)).toBe("{}");
  expect(inputTemplate(undefined)).toBe("{}");
  expect(exampleOf({ type: "string" })).toBe("");
});

test("the editor's text must be a JSON object", () => {
  expect(parseInput('{"a": 1}')).toEqual({ value: { a: 1 } });
  expect(parseInput("  ")).toEqual({ value: {} });
  expect(parseInput("[1]")).toEqual({ error: 'The input must be a JSON object, like {"amount": 120}.' });
  const broken = parseInput('{"a": ');
  expect("error" in broken && broken.error.startsWith("The input is not valid JSON:")).toBe(true);
});
