/** An invoice input schema with one property of each kind the form renders. */
export const INVOICE = {
  type: "object",
  required: ["vendor", "amount", "lines"],
  properties: {
    vendor: { type: "string", title: "Vendor", description: "Who sent the invoice" },
    amount: { type: "number" },
    copies: { type: "integer", default: 1 },
    urgent: { type: "boolean", default: false },
    currency: { type: "string", enum: ["EUR", "USD"], default: "EUR" },
    due: { type: "string", format: "date" },
    lines: {
      type: "array",
      items: {
        type: "object",
        required: ["sku"],
        properties: { sku: { type: "string" }, qty: { type: "integer", default: 1 } },
      },
    },
    meta: { type: "object" },
  },
};
