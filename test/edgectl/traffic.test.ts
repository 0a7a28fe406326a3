import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ExplainCountryShape } from "../../edgectl/output/shapes/explain-shape.js";
import { exampleState, runCli, uniquePrefix, useCliSuite } from "./cli-harness.js";

const ctx = useCliSuite();
const healthy = '{"status":"healthy"}';

async function seeded(tag: string, state: unknown = exampleState()) {
  const prefix = uniquePrefix(tag);
  const env = ctx.envFor(prefix);
  const r = await runCli(["apply", ctx.files.write(state), "--yes"], { env });
  expect(r.code, r.stderr).toBe(0);
  for (const p of ["fra-1", "ams-1", "par-1"])
    await ctx.client.put(`${prefix}health/${p}`).value(healthy);
  return { prefix, env };
}

const withEurope = () => {
  const s = exampleState();
  return { ...s, countries: { ...s.countries, EU: { primary: "par-1", fallbacks: ["ams-1"] } } };
};

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
