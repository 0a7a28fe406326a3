import { describe, expect, it } from "vitest";
import { ExplainShape } from "../../edgectl/output/shapes/explain-shape.js";
import { runCli, seededHealthy, useCliSuite } from "./cli-harness.js";

const suite = useCliSuite();

describe("edgectl explain CC: what its viewers get", () => {
  it("lists observed/CC/* per pool beside the pool's checkers' p90, in JSON and text", async () => {
    const { prefix, env } = await seededHealthy(suite, "explain-viewers");
    const put = (key: string, value: string) => suite.client.put(`${prefix}${key}`).value(value);
    await put("health/fra-1", '{"status":"healthy","p90_ms":120}');
    await put("observed/DE/fra-1", '{"p90_ms":4800,"samples":1250,"error_ratio":0.012}');
    await put("observed/DE/ams-1", '{"p90_ms":95,"samples":80,"error_ratio":0}');
    // Not an observation: left out (the compile names it as a problem).
    await put("observed/DE/par-1", '{"p90_ms":"slow"}');
    // Another country's viewers.
    await put("observed/FR/fra-1", '{"p90_ms":60,"samples":500,"error_ratio":0}');

    const json = await runCli(["explain", "DE", "-o", "json"], { env });
    expect(json.code, json.stderr).toBe(0);
    const doc = ExplainShape.parse(JSON.parse(json.stdout));
    expect(doc.kind === "country" && doc.viewers).toEqual([
      { pool: "ams-1", p90_ms: 95, samples: 80, error_ratio: 0, checkers_p90_ms: null },
      { pool: "fra-1", p90_ms: 4800, samples: 1250, error_ratio: 0.012, checkers_p90_ms: 120 },
    ]);

    const text = await runCli(["explain", "DE"], { env });
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split("\n");
    const at = lines.indexOf("viewers:");
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 3)).toEqual([
      "  ams-1        p90 95 ms over 80 requests, errors 0.0 %",
      "  fra-1        p90 4800 ms over 1250 requests, errors 1.2 % (checkers p90 120 ms)",
    ]);
    expect(lines[at + 3]).toBe("why:");
  });

  it("shows no viewers block and an empty list when nothing was observed", async () => {
    const { env } = await seededHealthy(suite, "explain-no-viewers");
    const json = await runCli(["explain", "DE", "-o", "json"], { env });
    const doc = ExplainShape.parse(JSON.parse(json.stdout));
    expect(doc.kind === "country" && doc.viewers).toEqual([]);
    const text = await runCli(["explain", "DE"], { env });
    expect(text.stdout).not.toContain("viewers:");
  });
});
