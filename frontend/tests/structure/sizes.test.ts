// The house's sizes for the front end (issue 32): no module over 700 lines, and no
// component function over 200. Components are functions whose name starts with a capital,
// declared with `function` or as a `const` arrow function; read with TypeScript's own parser.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = join(__dirname, "..", "..", "src");
const MODULE_MAX_LINES = 700;
const COMPONENT_MAX_LINES = 200;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

export function oversized(name: string, text: string): string[] {
  const file = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  if (lines > MODULE_MAX_LINES) found.push(`${name}: ${lines} lines`);
  const lineOf = (pos: number) => file.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node: ts.Node) => {
    let component: string | undefined;
    if (ts.isFunctionDeclaration(node) && node.name) component = node.name.text;
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer))
    ) {
      component = node.name.text;
    }
    if (component && /^[A-Z]/.test(component)) {
      const length = lineOf(node.getEnd()) - lineOf(node.getStart()) + 1;
      if (length > COMPONENT_MAX_LINES) found.push(`${name} ${component}: ${length} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe("front-end sizes", () => {
  it("keeps every module under 700 lines and every component under 200", () => {
    const found = sources(SRC).flatMap((path) =>
      oversized(relative(SRC, path), readFileSync(path, "utf8")),
    );
    expect(found).toEqual([]);
  });

  it("names a long module and a long component", () => {
    const body = Array.from({ length: 201 }, (_, n) => `  const x${n} = ${n};`).join("\n");
    const text = `export function Long() {\n${body}\n  return null;\n}\n` + "\n".repeat(500);
    expect(oversized("made-up.tsx", text)).toEqual([
      "made-up.tsx: 704 lines",
      "made-up.tsx Long: 204 lines",
    ]);
  });
});
