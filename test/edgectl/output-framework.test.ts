import { afterAll, describe, expect, it } from "vitest";
import { createCliOutput, lacksJsonResult } from "../../edgectl/output/cli-output.js";
import { ErrorShape } from "../../edgectl/output/shapes/error-shape.js";
import { ValidateShape } from "../../edgectl/output/shapes/validate-shape.js";
import { exampleState, runCli, tempFiles } from "./cli-harness.js";

const files = tempFiles();
afterAll(() => files.cleanup());

/** Parses stdout as exactly one JSON document (one line). */
function onlyDocument(stdout: string): unknown {
  const lines = stdout.split("\n").filter((l) => l !== "");
  expect(lines, stdout).toHaveLength(1);
  return JSON.parse(lines[0] ?? "");
}

describe("-o json output framework", () => {
  it("validate -o json emits one document of the validate shape, before or after the command", async () => {
    const f = files.write(exampleState());
    for (const argv of [
      ["-o", "json", "validate", f],
      ["validate", f, "--output", "json"],
      ["validate", "-ojson", f],
    ]) {
      const r = await runCli(argv, { env: {} });
      expect(r.code, r.stderr).toBe(0);
      const doc = ValidateShape.parse(onlyDocument(r.stdout));
      expect(doc).toEqual({
        file: f,
        valid: true,
        pools: ["ams-1", "fra-1", "par-1"],
        rules: ["country/DE", "country/_default"],
        fences: [],
      });
    }
  });

  it("an invalid file is the error document on stdout, exit 1, nothing on stderr", async () => {
    const bad = exampleState() as { countries: Record<string, unknown> };
    bad.countries.DE = { primary: "fra-9" };
    const r = await runCli(["validate", files.write(bad), "-o", "json"], { env: {} });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("");
    const doc = ErrorShape.parse(onlyDocument(r.stdout));
    expect(doc.error.code).toBe("invalid-input");
    expect(doc.error.details.join("\n")).toContain('countries.DE.primary: unknown pool "fra-9"');
  });

  it("usage errors are the error document too, with code usage and exit 1", async () => {
    for (const argv of [
      ["-o", "json", "validate", "--bogus", "x.yaml"],
      ["-o", "json", "frobnicate"],
      ["-o", "json", "validate"],
      ["-o", "json"],
    ]) {
      const r = await runCli(argv, { env: {} });
      expect(r.code, argv.join(" ")).toBe(1);
      expect(r.stderr, argv.join(" ")).toBe("");
      expect(ErrorShape.parse(onlyDocument(r.stdout)).error.code).toBe("usage");
    }
  });

  it("text mode keeps its lines and a usage error is printed once", async () => {
    const r = await runCli(["validate", "--bogus", "x.yaml"], { env: {} });
    expect(r.code).toBe(1);
    expect(r.stderr.match(/unknown option '--bogus'/g)).toHaveLength(1);
    const ok = await runCli(["validate", files.write(exampleState())], { env: {} });
    expect(ok.stdout).toMatch(/is valid: 3 pools, 2 country rules\n$/);
  });

  it("a JSON-mode action without a result is caught; a second result is refused", () => {
    let out = "";
    const io = {
      env: {},
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: () => 0 },
    };
    const output = createCliOutput(io, "text");
    expect(lacksJsonResult(output)).toBe(false); // no action began (usage error, --help)
    output.begin("json");
    expect(lacksJsonResult(output)).toBe(true);
    const opts = { schema: ValidateShape, text: () => [] };
    const doc = { file: "f", valid: true as const, pools: [], rules: [], fences: [] };
    const withExtra = { ...doc, extra: "dropped" };
    output.emit(withExtra, opts);
    expect(lacksJsonResult(output)).toBe(false);
    // the shape is the filter: what is not in it is not written
    expect(JSON.parse(out)).toEqual(doc);
    expect(() => output.emit(doc, opts)).toThrow(/second result/);
  });
});
