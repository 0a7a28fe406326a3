import { describe, expect, it } from "vitest";
import type { DesiredState } from "../../core/index.js";
import { MoveShape } from "../../edgectl/output/shapes/move-shape.js";
import { applyAll, auditScope, intentOf, markHealthy, recordsOf } from "./audit-support.js";
import { exampleState, runCli, useCliSuite } from "./cli-harness.js";

const suite = useCliSuite();
const POOLS = ["fra-1", "ams-1", "par-1"];

/** A fresh prefix holding the reference example (DE on fra-1, _default on ams-1), pools healthy. */
async function seeded(tag: string, state: DesiredState = exampleState()) {
  const scope = auditScope(suite, tag);
  await markHealthy(suite.client, scope.prefix, POOLS);
  await applyAll(suite, scope.env, [state]);
  return scope;
}

const rule = async (prefix: string, rel: string) =>
  JSON.parse((await suite.client.get(`${prefix}${rel}`).string()) ?? "null");

describe("edgectl move", () => {
  it("a country: POOL becomes primary, the old primary the first fallback; plan, edge effect, record", async () => {
    const { prefix, auditPrefix, env } = await seeded("mv1");
    const r = await runCli(["move", "DE", "--to", "ams-1", "--reason", "fra-1 hot", "--yes"], {
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(await rule(prefix, "country/DE")).toEqual({
      primary: "ams-1",
      fallbacks: ["fra-1", "par-1"],
    });
    expect(r.stdout).toContain("~ country/DE");
    expect(r.stdout).toContain("DE: fra-1 (country/DE) → ams-1 (country/DE)");
    expect(r.stdout).toContain("Applied 1 changes: epoch 2");
    const last = (await recordsOf(suite.client, auditPrefix)).at(-1)?.record;
    expect(last).toMatchObject({ epoch: 2, command: "move", reason: "fra-1 hot" });
    // again: already so, exit 0, nothing written
    const again = await runCli(["move", "DE", "--to", "ams-1", "--yes"], { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("No changes: country/DE already has primary ams-1");
    expect(await suite.client.get(`${prefix}epoch`).string()).toBe("2");
  });

  it("several countries at once: one without its own rule takes the chain it follows (_default's)", async () => {
    const { prefix, env } = await seeded("mv2");
    const r = await runCli(["move", "de,FR", "--to", "par-1", "--yes"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(await rule(prefix, "country/DE")).toEqual({
      primary: "par-1",
      fallbacks: ["fra-1", "ams-1"],
    });
    // FR followed _default {ams-1, [par-1]}: par-1 is promoted, ams-1 goes first
    expect(await rule(prefix, "country/FR")).toEqual({ primary: "par-1", fallbacks: ["ams-1"] });
    expect(r.stdout).toContain("+ country/FR");
    expect(r.stdout).toContain("FR: ams-1 (country/_default) → par-1 (country/FR)");
  });

  it("a continent: move EU --to fra-1 writes continent/EU, and EU's countries follow", async () => {
    const { prefix, env } = await seeded("mv3");
    const r = await runCli(["move", "EU", "--to", "fra-1", "--yes", "-o", "json"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(await rule(prefix, "continent/EU")).toEqual({
      primary: "fra-1",
      fallbacks: ["ams-1", "par-1"],
    });
    const doc = MoveShape.parse(JSON.parse(r.stdout));
    expect(doc).toMatchObject({ applied: true, epoch: 2, targets: ["continent/EU"], to: "fra-1" });
    expect(doc.changes).toEqual([
      {
        key: "continent/EU",
        kind: "add",
        after: JSON.stringify({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] }),
      },
    ]);
    const fr = doc.effect.find((e) => e.country === "FR");
    expect(fr).toMatchObject({
      before: { pool: "ams-1", source: "country/_default" },
      after: { pool: "fra-1", source: "continent/EU" },
    });
    // DE has its own rule (already fra-1): unaffected
    expect(doc.effect.find((e) => e.country === "DE")).toBeUndefined();
    expect(doc.effect.length).toBeGreaterThan(20);
    // continent/NA spelled out, beside a country
    const na = await runCli(["move", "continent/NA,US", "--to", "par-1", "--yes"], { env });
    expect(na.code, na.stderr).toBe(0);
    expect((await intentOf(suite.client, prefix))["continent/NA"]).toBeDefined();
    expect((await intentOf(suite.client, prefix))["country/US"]).toBeDefined();
  });

  it("--fallbacks replaces the chain; an unknown pool or a bad chain is exit 1 with nothing written", async () => {
    const { prefix, env } = await seeded("mv4");
    const r = await runCli(["move", "DE", "--to", "par-1", "--fallbacks", "ams-1", "--yes"], {
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(await rule(prefix, "country/DE")).toEqual({ primary: "par-1", fallbacks: ["ams-1"] });
    const unknown = await runCli(["move", "DE", "--to", "zzz-9", "--yes", "-o", "json"], { env });
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout).error).toMatchObject({
      code: "unknown-pool",
      message: '--to: pool "zzz-9" has no pool/ definition',
    });
    const repeats = await runCli(["move", "DE", "--to", "fra-1", "--fallbacks", "fra-1", "--yes"], {
      env,
    });
    expect(repeats.code).toBe(1);
    expect(repeats.stderr).toContain("country/DE.fallbacks.0: repeats the primary");
    const badTarget = await runCli(["move", "DE,ZZ", "--to", "fra-1", "--yes"], { env });
    expect(badTarget.code).toBe(1);
    expect(badTarget.stderr).toContain('"ZZ" is not a country or continent');
    expect(await suite.client.get(`${prefix}epoch`).string()).toBe("2");
  });

  it("a weighted rule loses its weights (all viewers go to POOL), and the plan says so", async () => {
    const base = exampleState();
    const state: DesiredState = {
      ...base,
      countries: {
        ...base.countries,
        DE: { primary: "fra-1", fallbacks: ["ams-1"], weights: { "fra-1": 80, "ams-1": 20 } },
      },
    };
    const { prefix, env } = await seeded("mv5", state);
    const r = await runCli(["move", "DE", "--to", "par-1", "--yes"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(await rule(prefix, "country/DE")).toEqual({
      primary: "par-1",
      fallbacks: ["fra-1", "ams-1"],
    });
    expect(r.stdout).toContain(
      "note: country/DE is written without weights (country/DE had fra-1 80, ams-1 20): all of DE's viewers go to par-1",
    );
  });

  it("a live boost still wins over the moved rule, and the plan says so", async () => {
    const { env } = await seeded("mv6");
    const boost = await runCli(["boost", "DE", "--pool", "par-1", "--ttl", "10m"], { env });
    expect(boost.code, boost.stderr).toBe(0);
    const r = await runCli(["move", "DE", "--to", "ams-1", "--yes"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /note: override\/DE \(until .*\) still wins over country\/DE \(edgectl unboost DE\)/,
    );
    expect(r.stdout).toContain("Edge effect under current health: no country changes pool.");
  });

  it("-o json on a terminal: the plan and the question go to stderr, stdout is the one document", async () => {
    const { env } = await seeded("mv8");
    const r = await runCli(["move", "DE", "--to", "par-1", "-o", "json"], {
      env,
      stdin: "yes\n",
      isTTY: true,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("Apply 1 changes? [y/N]");
    expect(r.stderr).toContain("~ country/DE");
    expect(MoveShape.parse(JSON.parse(r.stdout))).toMatchObject({
      applied: true,
      epoch: 2,
    });
  });

  it("without a TTY and without --yes it refuses (exit 1), nothing written", async () => {
    const { prefix, env } = await seeded("mv7");
    const r = await runCli(["move", "DE", "--to", "ams-1"], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("refusing to move without confirmation");
    expect(await suite.client.get(`${prefix}epoch`).string()).toBe("1");
  });
});
