import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ExplainCountryShape } from "../../edgectl/output/shapes/explain-shape.js";
import { exampleState, runCli, seededHealthy, useCliSuite, withEurope } from "./cli-harness.js";

const ctx = useCliSuite();
const seeded = (tag: string, state?: unknown) => seededHealthy(ctx, tag, state);

describe("plan, explain, validate and export with continents and weights", () => {
  it("plan prints the edge effect in shares of viewers", async () => {
    const { env } = await seeded("plan-shares");
    const s = exampleState();
    const weighted = {
      ...s,
      countries: {
        ...s.countries,
        DE: {
          primary: "fra-1",
          fallbacks: ["ams-1", "par-1"],
          weights: { "fra-1": 80, "ams-1": 20 },
        },
      },
    };
    const r = await runCli(["plan", ctx.files.write(weighted)], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("DE: fra-1 100% → fra-1 80% · ams-1 20% (country/DE)");
  });

  it("plan shows a continent rule reaching every country of the continent", async () => {
    const { env } = await seeded("plan-eu");
    const r = await runCli(["plan", ctx.files.write(withEurope())], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("+ continent/EU");
    expect(r.stdout).toContain("FR: ams-1 (country/_default) → par-1 (continent/EU)");
    expect(r.stdout).not.toContain("  DE:");
  });

  it("explain names a continent source", async () => {
    const { prefix, env } = await seeded("explain-eu", withEurope());
    const x = ExplainCountryShape.parse(
      JSON.parse((await runCli(["explain", "IT", "--json"], { env })).stdout),
    );
    expect(x.source).toBe("continent/EU");
    expect(x.rule_key).toBe("continent/EU");
    expect(x.route.pool).toBe("par-1");
    expect(x.reasons.join("\n")).toContain("continent/EU covers its continent");
    expect(x.split).toEqual([{ pool: "par-1", percent: 100 }]);
    for (const p of ["par-1", "ams-1"])
      await ctx.client.put(`${prefix}health/${p}`).value('{"status":"draining"}');
    const floor = ExplainCountryShape.parse(
      JSON.parse((await runCli(["explain", "IT", "--json"], { env })).stdout),
    );
    expect(floor.route.degraded).toBe("all-pools-unhealthy");
    expect(floor.rule_key).toBe("continent/EU");
    expect(floor.chain.map((l) => l.health)).toEqual(["draining", "draining"]);
  });

  it("validate accepts continent keys and weights and names bad ones by key", async () => {
    const good = await runCli(["validate", ctx.files.write(withEurope())], { env: {} });
    expect(good.code, good.stderr).toBe(0);
    const s = exampleState();
    const bad = {
      ...s,
      countries: {
        ...s.countries,
        "continent/XX": { primary: "par-1" },
        DE: { primary: "fra-1", fallbacks: ["ams-1"], weights: { "par-1": 10 } },
        EU: { primary: "par-1" },
        "continent/EU": { primary: "ams-1" },
      },
    };
    const r = await runCli(["validate", ctx.files.write(bad)], { env: {} });
    expect(r.code).toBe(1);
    const out = r.stdout + r.stderr;
    expect(out).toContain("countries.continent/XX");
    expect(out).toContain(
      "countries.DE.weights: names a pool that is not the primary or a fallback",
    );
    expect(out).toContain("countries.continent/EU: names a continent another key already names");
  });

  it("apply writes continent/K and export gives it back", async () => {
    const { prefix, env } = await seeded("export-eu", withEurope());
    expect(await ctx.client.get(`${prefix}continent/EU`).string()).toBe(
      '{"primary":"par-1","fallbacks":["ams-1"]}',
    );
    const exported = parse((await runCli(["export"], { env })).stdout) as {
      countries: Record<string, unknown>;
    };
    expect(exported.countries.EU).toEqual({ primary: "par-1", fallbacks: ["ams-1"] });
  });
});
