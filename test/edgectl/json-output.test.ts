import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EtcdMembers } from "../../adapters/etcd-members.js";
import { acquireApplyLock } from "../../edgectl/apply/apply-lock.js";
import { cliSettingsFromEnv } from "../../edgectl/cli/cli-settings.js";
import { ApplyShape } from "../../edgectl/output/shapes/apply-shape.js";
import { BoostShape } from "../../edgectl/output/shapes/boost-shape.js";
import { ExplainShape } from "../../edgectl/output/shapes/explain-shape.js";
import { ExportShape } from "../../edgectl/output/shapes/export-shape.js";
import { HeartbeatEventShape } from "../../edgectl/output/shapes/heartbeat-shape.js";
import { PlanShape } from "../../edgectl/output/shapes/plan-shape.js";
import { StatusShape } from "../../edgectl/output/shapes/status-shape.js";
import { UnboostShape } from "../../edgectl/output/shapes/unboost-shape.js";
import { run } from "../../edgectl/run.js";
import { freePort } from "../../testkit/ports.js";
import { exampleState, runCli, uniquePrefix, useCliSuite, waitFor } from "./cli-harness.js";
import { errorDocument, oneDocument } from "./json-harness.js";

const ctx = useCliSuite();
let members: EtcdMembers;
beforeAll(() => {
  members = EtcdMembers.open(cliSettingsFromEnv({ ETCD_ENDPOINTS: ctx.etcd.endpoint }));
});
afterAll(() => members?.close());

/** The example state with DE split 80/20 between fra-1 and ams-1. */
function weighted() {
  const s = exampleState();
  return {
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
}

/** A prefix holding the example state, every pool healthy. */
async function appliedPrefix(tag: string) {
  const prefix = uniquePrefix(tag);
  const env = ctx.envFor(prefix);
  const r = await runCli(["apply", ctx.files.write(exampleState()), "--yes"], { env });
  expect(r.code, r.stderr).toBe(0);
  for (const p of ["fra-1", "ams-1", "par-1"])
    await ctx.client.put(`${prefix}health/${p}`).value('{"status":"healthy"}');
  return { prefix, env };
}

describe("-o json against a real etcd, each shape checked with its schema", () => {
  it("plan carries the changes and the edge effect in shares per country", async () => {
    const { prefix, env } = await appliedPrefix("json-plan");
    const r = await runCli(["plan", ctx.files.write(weighted()), "-o", "json"], { env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const doc = oneDocument(r.stdout, PlanShape);
    expect(doc.prefix).toBe(prefix);
    expect(doc.epoch).toBe(1);
    expect(doc.changes.map((c) => `${c.kind} ${c.key}`)).toEqual(["change country/DE"]);
    expect(doc.effect).toEqual([
      {
        country: "DE",
        before: expect.objectContaining({
          pool: "fra-1",
          source: "country/DE",
          shares: [{ pool: "fra-1", percent: 100 }],
        }),
        after: expect.objectContaining({
          source: "country/DE",
          shares: [
            { pool: "fra-1", percent: 80 },
            { pool: "ams-1", percent: 20 },
          ],
        }),
      },
    ]);
    // the text mode says the same in one line
    const text = await runCli(["plan", ctx.files.write(weighted())], { env });
    expect(text.stdout).toContain("DE: fra-1 100% → fra-1 80% · ams-1 20% (country/DE)");
  });

  it("apply reports the commit, then a no-op; export gives the state back", async () => {
    const { prefix, env } = await appliedPrefix("json-apply");
    const file = ctx.files.write(weighted());
    const first = await runCli(["-o", "json", "apply", file, "--yes"], { env });
    expect(first.code, first.stdout).toBe(0);
    const applied = oneDocument(first.stdout, ApplyShape);
    expect(applied).toMatchObject({ applied: true, epoch: 2, prefix });
    expect(applied.commit_revision).toBeGreaterThan(applied.revision);
    expect(applied.effect.map((s) => s.country)).toEqual(["DE"]);
    const again = oneDocument(
      (await runCli(["-o", "json", "apply", file, "--yes"], { env })).stdout,
      ApplyShape,
    );
    expect(again).toMatchObject({ applied: false, epoch: 2, commit_revision: null, changes: [] });
    const exported = await runCli(["export", "-o", "json"], { env });
    expect(exported.code).toBe(0);
    const doc = oneDocument(exported.stdout, ExportShape);
    expect(doc.state).toEqual(weighted());
    expect(doc).toMatchObject({ epoch: 2, not_exported: [] });
  });

  it("explain carries the split and the source key; a continent says what it covers", async () => {
    const { prefix, env } = await appliedPrefix("json-explain");
    const state = weighted() as ReturnType<typeof weighted> & {
      countries: Record<string, unknown>;
    };
    state.countries.EU = { primary: "par-1", fallbacks: ["ams-1"] };
    expect((await runCli(["apply", ctx.files.write(state), "--yes"], { env })).code).toBe(0);
    const de = oneDocument(
      (await runCli(["explain", "DE", "-o", "json"], { env })).stdout,
      ExplainShape,
    );
    expect(de).toMatchObject({ kind: "country", country: "DE", source: "country/DE" });
    expect(de.split).toEqual([
      { pool: "fra-1", percent: 80 },
      { pool: "ams-1", percent: 20 },
    ]);
    const fr = oneDocument(
      (await runCli(["explain", "fr", "-o", "json"], { env })).stdout,
      ExplainShape,
    );
    expect(fr).toMatchObject({ kind: "country", source: "continent/EU", rule_key: "continent/EU" });
    expect(fr.split).toEqual([{ pool: "par-1", percent: 100 }]);
    const eu = oneDocument(
      (await runCli(["explain", "EU", "-o", "json"], { env })).stdout,
      ExplainShape,
    );
    if (eu.kind !== "continent") throw new Error(`expected a continent, got ${eu.kind}`);
    expect(eu).toMatchObject({ continent: "EU", rule_key: "continent/EU", source: "continent/EU" });
    expect(eu.rule).toEqual({ primary: "par-1", fallbacks: ["ams-1"] });
    expect(eu.covers).toContain("FR");
    expect(eu.covers).not.toContain("DE");
    expect(eu.own_rule).toEqual(["DE"]);
    expect(eu.route?.pool).toBe("par-1");
    // North America has no rule: its countries follow _default
    const na = oneDocument(
      (await runCli(["explain", "continent/NA", "-o", "json"], { env })).stdout,
      ExplainShape,
    );
    expect(na).toMatchObject({
      kind: "continent",
      rule_key: null,
      source: null,
      covers: [],
      route: null,
    });
    // a continent's boost replaces its rule for the countries it covers
    expect((await runCli(["boost", "EU", "--pool", "ams-1", "--ttl", "1m"], { env })).code).toBe(0);
    const boosted = oneDocument(
      (await runCli(["explain", "EU", "-o", "json"], { env })).stdout,
      ExplainShape,
    );
    expect(boosted).toMatchObject({ rule_key: "override/EU", source: "override/EU" });
    if (boosted.kind === "continent") expect(boosted.covers).toContain("FR");
    expect((await runCli(["unboost", "EU"], { env })).code).toBe(0);
    const text = await runCli(["explain", "EU"], { env });
    expect(text.stdout).toContain("rule:   continent/EU primary par-1");
    expect(text.stdout).toMatch(/covers \(\d+\): .*FR/);
    await ctx.client.delete().prefix(prefix);
  });

  it("boost --percent and unboost report the override, its split and its lease", async () => {
    const { env } = await appliedPrefix("json-boost");
    const r = await runCli(
      ["boost", "DE", "--pool", "ams-1", "--percent", "20", "--ttl", "2m", "-o", "json"],
      { env },
    );
    expect(r.code, r.stdout).toBe(0);
    const boost = oneDocument(r.stdout, BoostShape);
    expect(boost).toMatchObject({
      key: "override/DE",
      split_base: "country/DE",
      value: { primary: "fra-1", weights: { "fra-1": 80, "ams-1": 20 } },
    });
    expect(boost.split).toEqual([
      { pool: "fra-1", percent: 80 },
      { pool: "ams-1", percent: 20 },
    ]);
    expect(BigInt(boost.lease.id).toString(16)).toBe(boost.lease.hex);
    const un = oneDocument(
      (await runCli(["unboost", "DE", "-o", "json"], { env })).stdout,
      UnboostShape,
    );
    expect(un).toEqual({ key: "override/DE", outcome: "revoked", lease: boost.lease.hex });
    const none = oneDocument(
      (await runCli(["unboost", "DE", "-o", "json"], { env })).stdout,
      UnboostShape,
    );
    expect(none).toEqual({ key: "override/DE", outcome: "absent", lease: null });
  });

  it("status: behind is the status document with exit 1, not an error", async () => {
    const { env } = await appliedPrefix("json-status");
    const r = await runCli(["status", "--no-pusher", "-o", "json"], {
      env: { ...env, KV_SINK: "local", KV_LOCAL_PERSIST: "/nonexistent/kv" },
    });
    expect(r.code).toBe(1);
    const doc = oneDocument(r.stdout, StatusShape);
    expect(doc).toMatchObject({ in_sync: false, pusher: null, kv: { meta: null, routes: null } });
    expect(doc.etcd.epoch).toBe(1);
    expect(doc.kv.error).toContain("/nonexistent/kv");
    expect(doc.behind.length).toBeGreaterThan(0);
  });

  it("heartbeat writes JSON lines of its state changes: registered … stopped", async () => {
    const prefix = uniquePrefix("json-hb");
    const stop = new AbortController();
    const running = runCli(
      ["-o", "json", "heartbeat", "fra-1", "--ttl", "5", "--interval", "0.2"],
      {
        env: ctx.envFor(prefix),
        signal: stop.signal,
      },
    );
    const key = `${prefix}health/fra-1`;
    expect(await waitFor(async () => (await ctx.client.get(key).string()) !== null, 20_000)).toBe(
      true,
    );
    stop.abort();
    const r = await running;
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout
      .trim()
      .split("\n")
      .map((l) => HeartbeatEventShape.parse(JSON.parse(l)));
    expect(lines[0]).toMatchObject({ event: "registered", pool: "fra-1", status: "healthy" });
    expect(lines.at(-1)?.event).toBe("stopped");
    expect(await ctx.client.get(key).string()).toBeNull();
  });
});

describe("-o json error documents carry text mode's exit codes", () => {
  it("heartbeat's fatal failure is the error document as its only line", async () => {
    const r = await runCli(["heartbeat", "Not_A_Pool", "-o", "json"], {
      env: ctx.envFor(uniquePrefix("json-hb-bad")),
    });
    expect(r.code).toBe(1);
    expect(errorDocument(r.stdout)).toMatchObject({ code: "invalid-input" });
  });

  it("1 invalid: a file with problems names each, with code invalid-input", async () => {
    const bad = exampleState() as { countries: Record<string, unknown> };
    bad.countries.DE = { primary: "nowhere-1" };
    const r = await runCli(["plan", ctx.files.write(bad), "-o", "json"], {
      env: ctx.envFor(uniquePrefix("json-invalid")),
    });
    expect(r.code).toBe(1);
    const e = errorDocument(r.stdout);
    expect(e.code).toBe("invalid-input");
    expect(e.details.join("\n")).toContain('countries.DE.primary: unknown pool "nowhere-1"');
  });

  it("2 conflict: the epoch moved while apply asked (the prompt goes to stderr)", async () => {
    const { env } = await appliedPrefix("json-conflict");
    const stdin = new PassThrough();
    let out = "";
    let err = "";
    const slow = run(["-o", "json", "apply", ctx.files.write(weighted())], {
      env,
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: (s: string) => (err += s) },
      stdin,
      isTTY: true,
    });
    expect(await waitFor(() => err.includes("[y/N]"), 20_000)).toBe(true);
    const other = exampleState() as { countries: Record<string, unknown> };
    other.countries.FR = { primary: "par-1" };
    expect((await runCli(["apply", ctx.files.write(other), "--yes"], { env })).code).toBe(0);
    stdin.end("yes\n");
    expect(await slow).toBe(2);
    const e = errorDocument(out);
    expect(e.code).toBe("conflict");
    expect(e.message).toContain("epoch moved from 1 to 2");
  });

  it("3 locked: another holder has lock/apply", async () => {
    const prefix = uniquePrefix("json-locked");
    const held = await acquireApplyLock(members, prefix, 10, "someone-else");
    expect(held.ok).toBe(true);
    try {
      const r = await runCli(["apply", ctx.files.write(exampleState()), "--yes", "-o", "json"], {
        env: ctx.envFor(prefix),
      });
      expect(r.code).toBe(3);
      const e = errorDocument(r.stdout);
      expect(e.code).toBe("locked");
      expect(e.message).toContain("someone-else");
    } finally {
      if (held.ok) await held.lock.release();
    }
  });

  it("4 etcd unavailable, from every command that needs etcd", async () => {
    const env = {
      ETCD_ENDPOINTS: `http://127.0.0.1:${await freePort()}`,
      EDGECTL_ETCD_TIMEOUT_MS: "300",
    };
    const file = ctx.files.write(exampleState());
    for (const argv of [
      ["plan", file],
      ["apply", file, "--yes"],
      ["export"],
      ["explain", "DE", "--no-kv"],
      ["boost", "DE", "--pool", "ams-1", "--ttl", "1m"],
      ["unboost", "DE"],
      ["status", "--no-pusher"],
    ]) {
      const r = await runCli(["-o", "json", ...argv], { env });
      expect(r.code, argv.join(" ")).toBe(4);
      expect(r.stderr, argv.join(" ")).toBe("");
      expect(errorDocument(r.stdout).code, argv.join(" ")).toBe("etcd-unavailable");
    }
  });
});
