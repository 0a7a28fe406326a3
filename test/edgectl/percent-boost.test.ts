import { describe, expect, it } from "vitest";
import { ExplainCountryShape } from "../../edgectl/output/shapes/explain-shape.js";
import { runCli, seededHealthy, useCliSuite, withEurope } from "./cli-harness.js";

const ctx = useCliSuite();
const seeded = (tag: string, state?: unknown) => seededHealthy(ctx, tag, state);

describe("edgectl boost --percent", () => {
  it("writes the country's current rule plus weights {primary: 100−N, P: N}, under a lease", async () => {
    const { prefix, env } = await seeded("pct");
    const r = await runCli(["boost", "DE", "--pool", "ams-1", "--percent", "30", "--ttl", "1h"], {
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("split fra-1 70% · ams-1 30% (from country/DE)");
    const kv = (await ctx.client.get(`${prefix}override/DE`).exec()).kvs[0];
    expect(JSON.parse(kv?.value.toString() ?? "null")).toMatchObject({
      primary: "fra-1",
      fallbacks: ["ams-1", "par-1"],
      weights: { "fra-1": 70, "ams-1": 30 },
    });
    expect(kv?.lease).not.toBe("0");

    const x = ExplainCountryShape.parse(
      JSON.parse((await runCli(["explain", "DE", "--json"], { env })).stdout),
    );
    expect(x.source).toBe("override/DE");
    expect(x.split).toEqual([
      { pool: "fra-1", percent: 70 },
      { pool: "ams-1", percent: 30 },
    ]);
    const text = await runCli(["explain", "DE"], { env });
    expect(text.stdout).toContain("split:  fra-1 70% · ams-1 30%");
    expect(text.stdout).toContain("source: override/DE");
  });

  it("appends a pool the rule does not name, and splits a country that follows _default", async () => {
    const { prefix, env } = await seeded("pct-default");
    const r = await runCli(["boost", "jp", "--pool", "fra-1", "--percent", "20", "--ttl", "1h"], {
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(
      JSON.parse((await ctx.client.get(`${prefix}override/JP`).string()) ?? "null"),
    ).toMatchObject({
      primary: "ams-1",
      fallbacks: ["par-1", "fra-1"],
      weights: { "ams-1": 80, "fra-1": 20 },
    });
  });

  it("boosts continents: EU bare, North America as continent/NA (NA alone is Namibia)", async () => {
    const { prefix, env } = await seeded("pct-eu", withEurope());
    const eu = await runCli(["boost", "EU", "--pool", "fra-1", "--percent", "25", "--ttl", "1h"], {
      env,
    });
    expect(eu.code, eu.stderr).toBe(0);
    expect(
      JSON.parse((await ctx.client.get(`${prefix}override/EU`).string()) ?? "null"),
    ).toMatchObject({
      primary: "par-1",
      fallbacks: ["ams-1", "fra-1"],
      weights: { "par-1": 75, "fra-1": 25 },
    });
    const fr = ExplainCountryShape.parse(
      JSON.parse((await runCli(["explain", "FR", "--json"], { env })).stdout),
    );
    expect(fr.source).toBe("override/EU");
    expect(fr.split.map((s) => s.percent)).toEqual([75, 25]);
    const na = await runCli(["boost", "continent/na", "--pool", "fra-1", "--ttl", "1h"], { env });
    expect(na.code, na.stderr).toBe(0);
    expect(await ctx.client.get(`${prefix}override/continent/NA`).string()).not.toBeNull();
    const us = ExplainCountryShape.parse(
      JSON.parse((await runCli(["explain", "US", "--json"], { env })).stdout),
    );
    expect(us.source).toBe("override/continent/NA");
    const un = await runCli(["unboost", "continent/NA"], { env });
    expect(un.code, un.stderr).toBe(0);
    expect(await ctx.client.get(`${prefix}override/continent/NA`).string()).toBeNull();
  });

  it.each([
    [["--percent", "0"], "not a whole number from 1 to 99"],
    [["--percent", "100"], "not a whole number from 1 to 99"],
    [["--percent", "abc"], "not a whole number from 1 to 99"],
    [["--percent", "20", "--fallbacks", "par-1"], "drop --fallbacks"],
  ])("refuses %j with exit 1 and writes nothing", async (extra, message) => {
    const { prefix, env } = await seeded("pct-bad");
    const r = await runCli(["boost", "DE", "--pool", "ams-1", ...extra, "--ttl", "1h"], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
    expect(await ctx.client.getAll().prefix(`${prefix}override/`).keys()).toEqual([]);
  });

  it("refuses a percent boost to the rule's own primary", async () => {
    const { env } = await seeded("pct-primary");
    const r = await runCli(["boost", "DE", "--pool", "fra-1", "--percent", "20", "--ttl", "1h"], {
      env,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("already the primary of country/DE");
  });
});
