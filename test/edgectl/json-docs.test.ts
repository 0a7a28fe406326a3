import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createCliOutput } from "../../edgectl/output/cli-output.js";
import { replaceShapeSection } from "../../edgectl/output/shape-docs-section.js";
import { CLI_SHAPES } from "../../edgectl/output/shapes/index.js";
import { buildProgram } from "../../edgectl/program.js";

const io = { env: {}, stdout: { write: () => true }, stderr: { write: () => true } };

describe("docs/reference.md lists every -o json shape from the zod schemas", () => {
  it("is up to date with edgectl/output/shapes (run npm run docs:cli-json)", () => {
    const doc = readFileSync(resolve(import.meta.dirname, "../../docs/reference.md"), "utf8");
    expect(
      replaceShapeSection(doc) === doc,
      "docs/reference.md is stale: npm run docs:cli-json",
    ).toBe(true);
  });

  it("documents a shape for every command that prints a result", () => {
    const program = buildProgram(io, createCliOutput(io, "text"), () => {});
    const commands = program.commands.map((c) => c.name());
    const documented = new Set(CLI_SHAPES.map((s) => /^edgectl (\S+)/.exec(s.invocation)?.[1]));
    expect(commands.filter((c) => !documented.has(c))).toEqual([]);
  });
});
