import { renderToStaticMarkup } from "react-dom/server";
import { expect, test } from "vitest";
import { startDraft } from "../../src/forms/draft";
import { formFields } from "../../src/forms/model";
import { InputEditor } from "../../src/forms/SchemaForm";
import { INVOICE } from "./schema";

const FIELDS = formFields(INVOICE);

function render(errors: Record<string, string>, mode: "form" | "json" = "form"): string {
  const draft = startDraft(INVOICE);
  draft.values.fields.lines = [{ sku: "", qty: "1" }];
  return renderToStaticMarkup(<InputEditor fields={FIELDS} draft={{ ...draft, mode }} onDraft={() => undefined} errors={errors} prefix="f" />);
}

test("a required field is marked, described by its hint, and its refusal sits beside it", () => {
  const markup = render({ vendor: "required, but missing" });
  expect(markup).toContain(
    '<div class="form-field form-field--text"><label for="f-vendor" class="form-field__label">Vendor<span class="form-field__required" aria-hidden="true" title="required"> *</span><span class="visually-hidden"> (required)</span></label>' +
      '<input id="f-vendor" aria-invalid="true" aria-describedby="f-vendor-hint f-vendor-error" aria-required="true" type="text" value=""/>' +
      '<span class="form-field__hint" id="f-vendor-hint">Who sent the invoice</span>' +
      '<span class="form-field__error" id="f-vendor-error">required, but missing</span></div>',
  );
});

test("numbers, enums, dates and rows get their own controls; a row's cell error sits in the row", () => {
  const markup = render({ "lines.0.sku": "required, but missing" });
  expect(markup).toContain('<input id="f-amount" aria-invalid="false" aria-required="true" type="text" inputMode="decimal" value=""/>');
  expect(markup).toContain('<select id="f-currency" aria-invalid="false" aria-required="false"><option value="">(none)</option><option value="0" selected="">EUR</option><option value="1">USD</option></select>');
  expect(markup).toContain('<input id="f-due" aria-invalid="false" aria-required="false" type="date" value=""/>');
  expect(markup).toContain('<div class="form-rows__row" role="group" aria-label="lines row 1">');
  expect(markup).toContain('<span class="form-field__error" id="f-lines_0_sku-error">required, but missing</span>');
  expect(markup).toContain('aria-label="Remove lines row 1">Remove</button>');
  expect(markup).toContain(">Add row</button>");
});

test("a refusal of the input as a whole, or of a field the form lacks, is listed above the actions", () => {
  const markup = render({ "(input)": "must be an object", extra: "is not a field of this input" });
  expect(markup).toContain(
    '<div class="form-field__error input-editor__errors" id="f-input-error" role="alert"><p>must be an object</p><ul><li><code>extra</code>: is not a field of this input</li></ul></div>',
  );
});

test("in JSON mode the text is shown and every refusal is listed under it", () => {
  const markup = render({ amount: "required, but missing" }, "json");
  expect(markup).toContain('<textarea id="f-json" class="json-editor input-editor__json" aria-label="Input (JSON)"');
  expect(markup).toContain("Back to the form</button>");
  expect(markup).toContain("<li><code>amount</code>: required, but missing</li>");
  expect(markup).not.toContain('class="form-fields"');
});
