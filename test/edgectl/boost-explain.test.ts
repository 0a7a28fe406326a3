import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readPrefix } from "../../adapters/prefix-read.js";
import {
  compile,
  DEFAULT_FLOOR_POOL,
  DEFAULT_ORIGIN_TEMPLATE,
  resolveRoute,
} from "../../core/index.js";
import { toSnapshot } from "../../edgectl/etcd/read-prefix.js";
import type { Explanation } from "../../edgectl/explain/explain-country.js";
import { ExplainCountryShape } from "../../edgectl/output/shapes/explain-shape.js";
import { exampleState, runCli, uniquePrefix, useCliSuite, waitFor } from "./cli-harness.js";

const ctx = useCliSuite();

async function seeded(tag: string) {
  const prefix = uniquePrefix(tag);
  const env = ctx.envFor(prefix);
  const r = await runCli(["apply", ctx.files.write(exampleState()), "--yes"], { env });
  expect(r.code, r.stderr).toBe(0);
  return { prefix, env };
}

describe("edgectl boost / unboost", () => {
  it("refuses an unknown pool or a bad country/ttl with exit 1 and writes nothing", async () => {
    const { prefix, env } = await seeded("boost-bad");
    const unknown = await runCli(["boost", "DE", "--pool", "lis-1", "--ttl", "1h"], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown pool "lis-1"');
    const fb = await runCli(
      ["boost", "DE", "--pool", "ams-1", "--fallbacks", "par-1,zzz-9", "--ttl", "1h"],
      { env },
    );
    expect(fb.code).toBe(1);
    expect(fb.stderr).toContain('"zzz-9"');
    expect((await runCli(["boost", "ZZ", "--pool", "ams-1", "--ttl", "1h"], { env })).code).toBe(1);
    expect((await runCli(["boost", "DE", "--pool", "ams-1", "--ttl", "soon"], { env })).code).toBe(
      1,
    );
    expect((await runCli(["boost", "DE", "--pool", "ams-1"], { env })).code).toBe(1);
    expect(await ctx.client.getAll().prefix(`${prefix}override/`).keys()).toEqual([]);
  });

  it("writes override/CC with expires_at under a lease of the same TTL that expires by itself", async () => {
    const { prefix, env } = await seeded("boost-ttl");
    const before = Date.now();
    const r = await runCli(
      [
        "boost",
        "de",
        "--pool",
        "ams-1",
        "--fallbacks",
        "par-1",
        "--ttl",
        "4s",
        "--reason",
        "fra-1 is hot",
      ],
      { env },
    );
    const after = Date.now();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/lease [0-9a-f]+ \(\d+\), expires \d{4}-/);
    const res = await ctx.client.get(`${prefix}override/DE`).exec();
    const kv = res.kvs[0];
    const value = JSON.parse(kv?.value.toString() ?? "null") as { expires_at: string };
    expect(value).toEqual({
      primary: "ams-1",
      fallbacks: ["par-1"],
      reason: "fra-1 is hot",
      expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    // expires_at is the lease's end: granted within the run, 4 s after the grant
    const expiresAt = Date.parse(value.expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 4000);
    expect(expiresAt).toBeLessThanOrEqual(after + 4000);
    expect(r.stdout).toContain(`expires ${value.expires_at}`);
    expect(kv?.lease).not.toBe("0");
    const lease = await ctx.client.leaseClient.leaseTimeToLive({ ID: kv?.lease ?? "0" });
    expect(Number(lease.grantedTTL)).toBe(4);
    // what etcd has left of the lease and what expires_at has left agree (within a second)
    expect(Math.abs(expiresAt - Date.now() - Number(lease.TTL) * 1000)).toBeLessThan(1500);
    await ctx.client.put(`${prefix}health/ams-1`).value('{"status":"healthy"}');
    const explained = await runCli(["explain", "DE", "--json"], { env });
    const x = JSON.parse(explained.stdout) as Explanation;
    expect(x.route.source).toBe("override/DE");
    expect(x.reasons.join("\n")).toContain("fra-1 is hot");
    expect(
      await waitFor(
        async () => (await ctx.client.get(`${prefix}override/DE`).string()) === null,
        15_000,
      ),
    ).toBe(true);
  });

  it("--attr changes a market's attributes for the boost's time; apply, export and explain carry attrs", async () => {
    const prefix = uniquePrefix("boost-attr");
    const env = ctx.envFor(prefix);
    const state = exampleState();
    const withAttrs = {
      ...state,
      countries: {
        ...state.countries,
        EU: { primary: "ams-1", fallbacks: ["par-1"], attrs: { tier: "silver" } },
        DE: { ...state.countries.DE, attrs: { tokenizer: "de", trending: "dax-1" } },
      },
    };
    const applied = await runCli(["apply", ctx.files.write(withAttrs), "--yes"], { env });
    expect(applied.code, applied.stderr).toBe(0);
    const exported = await runCli(["export", "-o", "json"], { env });
    const doc = JSON.parse(exported.stdout) as {
      state: { countries: Record<string, { attrs?: Record<string, string> }> };
    };
    expect(doc.state.countries.DE?.attrs).toEqual({ tokenizer: "de", trending: "dax-1" });
    expect(doc.state.countries.EU?.attrs).toEqual({ tier: "silver" });

    // Attributes only: the current rule stays, the attribute overlays it for the boost.
    const boost = await runCli(
      ["boost", "DE", "--attr", "trending=kpop-1", "--ttl", "6h", "--reason", "music week"],
      { env },
    );
    expect(boost.code, boost.stderr).toBe(0);
    expect(boost.stdout).toContain("trending=kpop-1");
    const stored = JSON.parse(
      (await ctx.client.get(`${prefix}override/DE`).string()) ?? "{}",
    ) as Record<string, unknown>;
    expect(stored).toMatchObject({
      primary: "fra-1",
      fallbacks: ["ams-1", "par-1"],
      attrs: { trending: "kpop-1" },
      reason: "music week",
    });
    const explained = await runCli(["explain", "DE", "-o", "json"], { env });
    const x = ExplainCountryShape.parse(JSON.parse(explained.stdout));
    expect(x.rule_key).toBe("override/DE");
    expect(x.route.attrs).toEqual({ tier: "silver", tokenizer: "de", trending: "kpop-1" });
    const text = await runCli(["explain", "DE"], { env });
    expect(text.stdout).toMatch(/attrs: +tier=silver · tokenizer=de · trending=kpop-1/);

    for (const bad of [
      ["--attr", "Trending=x"],
      ["--attr", "trending"],
      ["--attr", "a=1", "--attr", "a=2"],
      ["--attr", `tier=${"x".repeat(129)}`],
      ["--percent", "20"],
    ]) {
      const r = await runCli(["boost", "FR", ...bad, "--ttl", "1h"], { env });
      expect(r.code, bad.join(" ")).toBe(1);
      expect(r.stderr).toMatch(/--attr|--percent|--pool/);
    }
    expect(await ctx.client.get(`${prefix}override/FR`).string()).toBeNull();
    const invalid = await runCli(
      [
        "validate",
        ctx.files.write({
          ...state,
          countries: { ...state.countries, DE: { primary: "fra-1", attrs: { "Bad Name": "x" } } },
        }),
      ],
      { env },
    );
    expect(invalid.code).toBe(1);
    expect(invalid.stdout + invalid.stderr).toMatch(
      /countries\.DE\.attrs: attribute names must match/,
    );
  });

  it("unboost revokes the lease; a lease-less override is deleted; absent is exit 0", async () => {
    const { prefix, env } = await seeded("unboost");
    expect((await runCli(["boost", "DE", "--pool", "ams-1", "--ttl", "6h"], { env })).code).toBe(0);
    const leaseId = (await ctx.client.get(`${prefix}override/DE`).exec()).kvs[0]?.lease ?? "0";
    const un = await runCli(["unboost", "DE"], { env });
    expect(un.code, un.stderr).toBe(0);
    expect(un.stdout).toContain("revoked");
    expect(await ctx.client.get(`${prefix}override/DE`).string()).toBeNull();
    const ttl = await ctx.client.leaseClient.leaseTimeToLive({ ID: leaseId });
    expect(Number(ttl.TTL)).toBeLessThanOrEqual(0);

    await ctx.client.put(`${prefix}override/FR`).value('{"primary":"ams-1","fallbacks":[]}');
    const plain = await runCli(["unboost", "FR"], { env });
    expect(plain.code).toBe(0);
    expect(await ctx.client.get(`${prefix}override/FR`).string()).toBeNull();

    const absent = await runCli(["unboost", "IT"], { env });
    expect(absent.code).toBe(0);
    expect(absent.stdout).toContain("does not exist");
  });
});

describe("edgectl explain", () => {
  it("exits 1 for an invalid country argument", async () => {
    const { env } = await seeded("explain-bad");
    const r = await runCli(["explain", "ZZ"], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('"ZZ" is not a country');
  });

  it("explains the floor when every pool is unhealthy, and a fallback when the primary is down", async () => {
    const { prefix, env } = await seeded("explain-floor");
    const floor = await runCli(["explain", "DE"], { env });
    expect(floor.code).toBe(0);
    expect(floor.stdout).toContain("every pool of the chain is unhealthy: floor pool par-1");
    await ctx.client.put(`${prefix}health/ams-1`).value('{"status":"healthy"}');
    await ctx.client.put(`${prefix}health/fra-1`).value('{"status":"draining"}');
    const fb = await runCli(["explain", "DE"], { env });
    expect(fb.stdout).toContain("fra-1 skipped: draining");
    expect(fb.stdout).toContain("ams-1 is the first healthy pool of country/DE");
    expect(fb.stdout).toContain("chosen: ams-1 https://ams-1.origin.example.com");
    const jp = await runCli(["explain", "JP"], { env });
    expect(jp.stdout).toContain("JP follows _default");
  });

  it("agrees with compile's map for every country of a random state (property)", async () => {
    const pools = ["p-a", "p-b", "p-c", "p-d"];
    const ccs = ["DE", "FR", "JP", "US", "BR", "_default"];
    const rule = fc
      .tuple(fc.constantFrom(...pools, "p-x"), fc.subarray(pools, { maxLength: 3 }))
      .map(([primary, fb]) => ({ primary, fallbacks: fb.filter((p) => p !== primary) }));
    const arb = fc.record({
      defined: fc.subarray(pools, { minLength: 1 }),
      health: fc.dictionary(
        fc.constantFrom(...pools),
        fc.constantFrom("healthy", "draining", "unhealthy"),
      ),
      countries: fc.dictionary(fc.constantFrom(...ccs), rule, { minKeys: 0, maxKeys: 5 }),
      overrides: fc.dictionary(fc.constantFrom(...ccs), rule, { maxKeys: 2 }),
      garbage: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(arb, async (s) => {
        const prefix = uniquePrefix("prop");
        const env = ctx.envFor(prefix);
        for (const p of s.defined)
          await ctx.client
            .put(`${prefix}pool/${p}`)
            .value(JSON.stringify({ origin: `https://${p}.example.net` }));
        for (const [p, st] of Object.entries(s.health))
          await ctx.client.put(`${prefix}health/${p}`).value(JSON.stringify({ status: st }));
        for (const [cc, r] of Object.entries(s.countries))
          await ctx.client.put(`${prefix}country/${cc}`).value(JSON.stringify(r));
        for (const [cc, r] of Object.entries(s.overrides))
          await ctx.client.put(`${prefix}override/${cc}`).value(JSON.stringify(r));
        if (s.garbage) await ctx.client.put(`${prefix}country/FR`).value("{not json");
        const read = await readPrefix(ctx.client, prefix);
        const { map } = compile(toSnapshot(read), {
          carried: null,
          prefix,
          floorPool: DEFAULT_FLOOR_POOL,
          originTemplate: DEFAULT_ORIGIN_TEMPLATE,
          now: new Date(),
        });
        for (const cc of [...ccs, "XX", "IT"]) {
          const r = await runCli(["explain", cc, "--json", "--no-kv"], { env });
          expect(r.code, r.stderr).toBe(0);
          const x = ExplainCountryShape.parse(JSON.parse(r.stdout));
          const want = cc === "_default" ? map.default : resolveRoute(map, cc);
          expect(x.revision).toBe(read.revision);
          expect(x.route).toEqual(want);
          // the explanation's chain is consistent with the route it explains
          const firstHealthy = x.chain.find((l) => l.takes_traffic);
          if (want.source === "floor") expect(firstHealthy).toBeUndefined();
          else expect(firstHealthy?.pool).toBe(want.pool);
        }
        await ctx.client.delete().prefix(prefix);
      }),
      { numRuns: 12 },
    );
  });
});
