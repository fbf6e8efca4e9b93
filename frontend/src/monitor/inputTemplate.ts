/** A starting input for a flow, from its declared `input` JSON Schema (CONTRACT §1). */

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Return a value of the schema's shape: its default, first enum value, or an empty value of its type. */
export function exampleOf(schema: unknown, depth = 0): unknown {
  if (!isSchema(schema) || depth > 8) return null;
  if ("default" in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      const properties = isSchema(schema.properties) ? schema.properties : {};
      for (const [name, property] of Object.entries(properties)) {
        out[name] = exampleOf(property, depth + 1);
      }
      return out;
    }
    case "array":
      return [];
    case "string":
      return "";
    case "integer":
    case "number":
      return 0;
    case "boolean":
      return false;
    default:
      return isSchema(schema.properties) ? exampleOf({ ...schema, type: "object" }, depth) : null;
  }
}

/** The JSON text to prefill a flow's input editor with: `{}` when the flow declares no input. */
export function inputTemplate(schema: unknown): string {
  const example = isSchema(schema) ? exampleOf(schema) : {};
  return JSON.stringify(isSchema(example) ? example : {}, null, 2);
}

/** Parse the editor's text: the input object, or a message saying what is wrong. */
export function parseInput(text: string): { value: Record<string, unknown> } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() === "" ? "{}" : text);
  } catch (error) {
    return { error: `The input is not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (!isSchema(value)) return { error: "The input must be a JSON object, like {\"amount\": 120}." };
  return { value };
}
