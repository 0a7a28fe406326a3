import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CanarySchema, onCanarySide } from "../../core/index.js";
import { CanaryStatusShape } from "../../edgectl/output/shapes/canary-shape.js";
import { startStatusServer } from "../../pusher/http-server.js";
import { type Origins, startOrigins } from "../../testkit/origins.js";
import { freePort } from "../../testkit/ports.js";
import { parsePromText, sampleValue } from "../../testkit/prom-text.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { recordsOf } from "../edgectl/audit-support.js";
import { runCli, spawnBin } from "../edgectl/cli-harness.js";
import { type PrometheusServer, startPrometheus } from "../helpers/prometheus.js";
import { type PusherUnderTest, uniqueNames, useEtcd, waitFor } from "../pusher/harness.js";

// docs/reference.md §13 through the whole chain: edgectl move --canary → etcd → the pusher → its
// KV → the Worker in workerd → loopback origins; the Worker's observations → edgectl observe (the
// real bin), which judges the gates and ends the canary through the apply commit. A real
// Prometheus on the shipped alert rules scrapes the pusher's /metrics for the frozen canary.

const POOLS = ["fra-1", "gru-slow", "gru-2"] as const;
const DEBUG = "canary-judged-debug";
const OBSERVE = "canary-judged-observe";
const SHARE = 10;
const VIEWERS = Array.from({ length: 1000 }, (_, i) => `203.0.${i >> 8}.${i & 255}`);
/** How long the cold shard takes before its headers: the seeds' BR incident. */
const SLOW_MS = 4000;
const RULES = resolve(import.meta.dirname, "../../deploy/prometheus/alerts.yml");
const STUCK = "EdgeCanaryStuck";

/** The shipped rules with one change: EdgeCanaryStuck's `for: 5m` becomes `for: 1s`. */
function rulesForTest(): unknown {
  const doc = parse(readFileSync(RULES, "utf8")) as {
    groups: { rules: { alert?: string; for?: string }[] }[];
  };
  const rule = doc.groups.flatMap((g) => g.rules).find((r) => r.alert === STUCK);
  if (!rule) throw new Error(`${STUCK} is not in alerts.yml`);
  expect(rule.for).toBe("5m");
  rule.for = "1s";
  return doc;
}

const ctx = useEtcd();

describe("a canary judged by edgectl observe: etcd → pusher → Worker (workerd) → observer", () => {
  let origins: Origins;
  let worker: TestWorker;
  let edgeUrl: string;
  let p: PusherUnderTest;
  let prefix: string;
  let auditPrefix: string;
  let env: Record<string, string>;
  let syncing = true;
  let sync: Promise<void>;
  const observers: ChildProcess[] = [];
  const clients: { stop(): Promise<void> }[] = [];

  /** Copies every map the pusher writes to its KV into the Worker's KV. */
  const syncMaps = async () => {
    let last = "";
    while (syncing) {
      const text = await p.kv.get("routes");
      if (text && text !== last) {
        await worker.putMap(text, { settle: false });
        last = text;
      }
      await sleep(50);
    }
  };

  /** Starts the real `edgectl observe` on the Worker; its output is kept for failures. */
  const startObserver = async () => {
    const port = await freePort();
    const child = spawnBin(
      [
        "observe",
        "--edge",
        edgeUrl,
        "--interval",
        "0.25",
        "--ttl",
        "2",
        "--listen",
        `127.0.0.1:${port}`,
      ],
      { ...env, OBSERVE_TOKEN: OBSERVE, EDGECTL_USER: "observer" },
    );
    observers.push(child);
    let out = "";
    child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
    const up = await waitFor("observer /status", async () => {
      const res = await fetch(`http://127.0.0.1:${port}/status`).catch(() => null);
      const doc = (await res?.json().catch(() => null)) as { status?: string } | null;
      return doc?.status === "ok" ? true : null;
    });
    expect(up, out).toBe(true);
    return { child, output: () => out, status: `http://127.0.0.1:${port}/status` };
  };

  /** Viewers of BR, many at a time, until `stop()`: which pool and side each one got. */
  const viewersOfBr = () => {
    const seen = new Map<string, { pools: Set<string>; sides: Set<string> }>();
    let running = true;
    let next = 0;
    const one = async () => {
      while (running) {
        const ip = VIEWERS[next++ % VIEWERS.length] ?? "";
        const res = await worker
          .dispatch(`/vod/seg-${next}.ts`, { country: "BR", headers: { "CF-Connecting-IP": ip } })
          .catch((e: unknown) => {
            if (running) throw e;
            return null;
          });
        if (!res) return;
        const s = seen.get(ip) ?? { pools: new Set(), sides: new Set() };
        s.pools.add(res.headers.get("x-edge-pool") ?? "none");
        s.sides.add(res.headers.get("x-edge-canary") ?? "none");
        seen.set(ip, s);
      }
    };
    const loops = Array.from({ length: 24 }, one);
    const client = {
      seen,
      stop: async () => {
        running = false;
        await Promise.all(loops);
      },
    };
    clients.push(client);
    return client;
  };

  const canaryNow = async () => {
    const text = await ctx.client.get(`${prefix}canary/current`).string();
    return text === null ? null : CanarySchema.parse(JSON.parse(text));
  };

  /** Each viewer's pool as the Worker routes it now. */
  const routedPools = async (): Promise<Map<string, number>> => {
    const out = new Map<string, number>();
    for (const v of VIEWERS.slice(0, 300)) {
      const res = await worker.dispatch("/__edge/route", {
        country: "BR",
        headers: { "X-Edge-Debug-Token": DEBUG, "X-Edge-Debug-Viewer": v },
      });
      const pool = res.json<{ route: { pool: string } }>().route.pool;
      out.set(pool, (out.get(pool) ?? 0) + 1);
    }
    return out;
  };

  beforeAll(async () => {
    origins = await startOrigins(POOLS);
    worker = await startWorker({
      DEBUG_TOKEN: DEBUG,
      OBSERVE_TOKEN: OBSERVE,
      OBSERVE_FLUSH_SECONDS: "0",
      ORIGIN_TIMEOUT_MS: "10000",
    });
    edgeUrl = (await worker.mf.ready).origin;
  }, 60_000);
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.stop().catch(() => undefined);
    for (const c of observers.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
    syncing = false;
    await sync;
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });

  /** A fresh prefix with BR on fra-1, the pusher on it, and the Worker following its KV. */
  let seeds = 0;
  let seededNames: ReturnType<typeof uniqueNames>;
  const seed = async () => {
    seeds += 1;
    for (const o of origins.all) o.reset();
    origins.get("gru-slow").respond(() => ({ status: 200, body: "cold", delayMs: SLOW_MS }));
    const names = uniqueNames();
    prefix = names.prefix;
    auditPrefix = `${prefix.slice(0, -1)}-audit/`;
    env = {
      ETCD_ENDPOINTS: ctx.etcd.endpoint,
      ROUTING_PREFIX: prefix,
      AUDIT_PREFIX: auditPrefix,
      EDGECTL_USER: "sre",
    };
    const put = (k: string, v: unknown) => ctx.client.put(`${prefix}${k}`).value(JSON.stringify(v));
    for (const pool of POOLS) {
      await put(`pool/${pool}`, { origin: origins.get(pool).url });
      await put(`health/${pool}`, { status: "healthy", p90_ms: 100 });
    }
    await put("country/_default", { primary: "fra-1", fallbacks: [] });
    await put("country/BR", { primary: "fra-1", fallbacks: [] });
    // each test's canary gets its own id (c11, c21, …): the Worker keeps its observations
    await ctx.client.put(`${prefix}epoch`).value(String(seeds * 10));
    p = ctx.start({ ...names, id: "pusher-a" });
    seededNames = names;
    syncing = true;
    sync = syncMaps();
    await waitFor("BR on fra-1", async () =>
      (await routedPools()).get("fra-1") === 300 ? true : null,
    );
  };

  const moveBr = async (to: string, extra: string[]) => {
    const r = await runCli(
      ["move", "BR", "--to", to, "--canary", String(SHARE), ...extra, "--yes"],
      { env },
    );
    expect(r.code, r.stderr).toBe(0);
    const canary = await canaryNow();
    expect(canary?.share).toBe(SHARE);
    return canary?.id ?? "";
  };

  it("a canary to a shard answering in 4 s rolls back by itself: at most its share (+2 points) of BR's viewers reach it, stable viewers never move", async () => {
    await seed();
    const observer = await startObserver();
    const client = viewersOfBr();
    const id = await moveBr("gru-slow", ["--for", "10m", "--min-samples", "20"]);
    const gone = await waitFor(
      "rolled back",
      async () => ((await canaryNow()) === null ? true : null),
      60_000,
    ).catch(() => false);
    expect(gone, observer.output()).toBe(true);
    await client.stop();
    // what viewers see follows: the map without the canary reaches the Worker
    await waitFor(
      "BR back on fra-1",
      async () => ((await routedPools()).get("fra-1") === 300 ? true : null),
      60_000,
    );

    // Only viewers the canary's hash draws reach the slow shard, and the hash draws at most the
    // share (+2 points) of BR's viewers.
    const drawn = VIEWERS.filter((ip) => onCanarySide({ id, share: SHARE }, ip));
    expect((100 * drawn.length) / VIEWERS.length).toBeLessThanOrEqual(SHARE + 2);
    expect(client.seen.size).toBeGreaterThan(200);
    // the shard's own account: each request names its viewer (X-Forwarded-For); the Worker's
    // hedge may answer a canary viewer from fra-1, but the request reached the slow shard
    const reached = new Set(
      origins.get("gru-slow").requests.map((r) => String(r.headers["x-forwarded-for"])),
    );
    expect(reached.size).toBeGreaterThan(0);
    for (const ip of reached) expect(drawn, ip).toContain(ip);
    for (const [ip, s] of client.seen)
      if (!s.sides.has(`${id}:canary`))
        expect([...s.pools], `stable viewer ${ip}`).toEqual(["fra-1"]);
    const records = await recordsOf(ctx.client, auditPrefix);
    const last = records.at(-1)?.record;
    expect(last).toMatchObject({ command: "canary-rollback", by: "observer" });
    expect(last?.reason).toMatch(
      /^rolled back by its judge: gate failed: p90 \d+ ms > stable \d+ ms × 1.25 \+ 50 ms = \d+ ms \(canary \d+ requests, stable \d+, in BR over \d minute\(s\)\)$/,
    );
    expect(last?.changes.map((c) => c.key)).toEqual(["canary/current"]);
    expect(await ctx.client.get(`${prefix}country/BR`).string()).toBe(
      JSON.stringify({ primary: "fra-1", fallbacks: [] }),
    );
    // the judge let its judgement go with the canary
    expect(await ctx.client.get(`${prefix}canary/judgement`).string()).toBeNull();
    expect(observer.output()).toContain('"event":"canary-rolled-back"');
  }, 120_000);

  it("a canary to a healthy shard is promoted after --for, and every BR viewer ends on it", async () => {
    await seed();
    const observer = await startObserver();
    const client = viewersOfBr();
    // a loaded test machine adds tens of ms to a loopback p90: the gate allows for it
    const id = await moveBr("gru-2", [
      "--for",
      "8s",
      "--min-samples",
      "20",
      "--gate",
      "p90<=x1.25+250ms",
    ]);
    const judged = await waitFor(
      "judged passing",
      async () => {
        const r = await runCli(["canary", "status", "-o", "json"], { env });
        const doc = CanaryStatusShape.parse(JSON.parse(r.stdout));
        return doc.judge?.judgement?.verdict === "passing" ? doc : null;
      },
      60_000,
    );
    expect(judged.judge).toMatchObject({ state: "judging", frozen: null });
    const seen = (await (await fetch(observer.status)).json()) as {
      canary: { role: string; judgement: { id: string } | null } | null;
    };
    expect(seen.canary?.role).toBe("judge");
    const metrics = parsePromText(
      await (await fetch(observer.status.replace(/\/status$/, "/metrics"))).text(),
    );
    expect(sampleValue(metrics, "edge_observer_canary_role", { role: "judge" })).toBe(1);
    expect(sampleValue(metrics, "edge_observer_canary_share_percent")).toBe(SHARE);
    expect(
      sampleValue(metrics, "edge_observer_canary_samples", { side: "canary" }),
    ).toBeGreaterThan(0);
    expect(judged.judge?.judgement?.countries).toEqual(["BR"]);
    const gone = await waitFor(
      "promoted",
      async () => ((await canaryNow()) === null ? true : null),
      30_000,
    ).catch(() => false);
    expect(gone, observer.output()).toBe(true);
    await client.stop();
    await waitFor(
      "BR on gru-2",
      async () => ((await routedPools()).get("gru-2") === 300 ? true : null),
      60_000,
    );
    const last = (await recordsOf(ctx.client, auditPrefix)).at(-1)?.record;
    expect(last).toMatchObject({ command: "canary-promote", by: "observer" });
    expect(last?.reason).toMatch(
      /^promoted by its judge: the gates held for 8 s: gates hold: errors [\d.]+ % <= stable [\d.]+ % \+ 1 pt; p90 \d+ ms <= stable \d+ ms × 1.25 \+ 250 ms/,
    );
    expect(last?.changes.map((c) => c.key).sort()).toEqual(["canary/current", "country/BR"]);
    expect(JSON.parse((await ctx.client.get(`${prefix}country/BR`).string()) ?? "{}")).toEqual({
      primary: "gru-2",
      fallbacks: ["fra-1"],
    });
    expect(id).toMatch(/^c\d+$/);
  }, 120_000);

  /**
   * Prometheus on the shipped rules, scraping every second a port the pusher's /metrics will
   * listen on: it starts before the world, as its first scrape comes seconds after it is ready.
   */
  const startScraper = async () => {
    const port = await freePort();
    const prom = await startPrometheus({ rules: rulesForTest(), targets: [`127.0.0.1:${port}`] });
    ctx.cleanups.push(() => prom.stop());
    return { prom, port };
  };

  it("a canary whose observer is killed freezes: it keeps its share, says so, EdgeCanaryStuck fires, and it is never promoted", async () => {
    const [{ prom, port }] = await Promise.all([startScraper(), seed()]);
    const server = await startStatusServer({
      host: "127.0.0.1",
      port,
      status: p.pusher.status,
      metrics: p.pusher.metrics,
    });
    ctx.cleanups.push(() => server.close());
    const observer = await startObserver();
    const client = viewersOfBr();
    await moveBr("gru-2", ["--for", "2s", "--min-samples", "100000"]);
    const status = async () =>
      CanaryStatusShape.parse(
        JSON.parse((await runCli(["canary", "status", "-o", "json"], { env })).stdout),
      );
    await waitFor("judged", async () =>
      (await status()).judge?.state === "judging" ? true : null,
    );
    // before the kill: Prometheus has the leader's judged canary, and the rule judged it fine
    await waitFor("the judged canary scraped", async () => {
      const rows = await prom.query(
        "edge_pusher_canary_frozen == 0 and on (job, instance) edge_pusher_canary_running == 1 and on (job, instance) edge_pusher_is_leader == 1",
      );
      return rows.length === 1 ? true : null;
    });
    const scrapedAt = Date.now();
    const judgedFine = await waitFor("the rule evaluated on it", async () => {
      const rule = (await prom.alertingRules()).find((r) => r.name === STUCK);
      return rule && Date.parse(rule.lastEvaluation) > scrapedAt ? rule : null;
    });
    expect(judgedFine).toMatchObject({ health: "ok", state: "inactive" });
    observer.child.kill("SIGKILL");
    const killedAt = Date.now();
    const frozen = await waitFor("frozen", async () => {
      const s = await status();
      return s.judge?.state === "frozen" ? s : null;
    });
    expect(frozen.judge?.frozen).toContain("no judge");
    const text = await runCli(["canary", "status"], { env });
    expect(text.stdout).toContain("FROZEN: no judge");
    let alerts: Awaited<ReturnType<PrometheusServer["alerts"]>> = [];
    const fired = await waitFor(
      STUCK,
      async () => {
        alerts = await prom.alerts();
        return alerts.some((a) => a.labels.alertname === STUCK && a.state === "firing");
      },
      30_000,
    ).catch(() => false);
    expect(fired, `${JSON.stringify(alerts)}\n${prom.output()}`).toBe(true);
    const stuck = alerts.filter((a) => a.labels.alertname === STUCK);
    expect(stuck).toHaveLength(1);
    expect(stuck[0]?.labels.severity).toBe("warning");
    expect(stuck[0]?.annotations.runbook).toBe("docs/operating.md#edgecanarystuck");
    // well past --for: still running, on its share
    await sleep(Math.max(0, 4000 - (Date.now() - killedAt)));
    expect((await canaryNow())?.share).toBe(SHARE);
    const pools = await routedPools();
    expect(pools.get("gru-2") ?? 0).toBeGreaterThan(0);
    expect(pools.get("gru-2") ?? 0).toBeLessThan(300 * 0.25);
    await client.stop();
    expect((await recordsOf(ctx.client, auditPrefix)).at(-1)?.record.command).toBe("move");
  }, 120_000);

  it("killing the leader pusher mid-canary changes nothing viewers see", async () => {
    await seed();
    const b = ctx.start({ ...seededNames, id: "pusher-b", kv: p.kv });
    const observer = await startObserver();
    await moveBr("gru-2", ["--for", "10m", "--min-samples", "100000"]);
    const sides = async () => {
      const out: string[] = [];
      for (const v of VIEWERS.slice(0, 300)) {
        const res = await worker.dispatch("/__edge/route", {
          country: "BR",
          headers: { "X-Edge-Debug-Token": DEBUG, "X-Edge-Debug-Viewer": v },
        });
        const body = res.json<{ canary: string | null; route: { pool: string } }>();
        out.push(`${body.canary}/${body.route.pool}`);
      }
      return out;
    };
    const before = await waitFor(
      "the canary at the edge",
      async () => {
        const s = await sides();
        // every viewer of BR on one side or the other, in one sweep
        return s.every((x) => /^c\d+:(canary|stable)\//.test(x)) ? s : null;
      },
      30_000,
    );
    const leader = p.pusher.status.role === "leader" ? p : b;
    const standby = leader === p ? b : p;
    await leader.stop();
    await waitFor(
      "the standby leads",
      () => (standby.pusher.status.role === "leader" ? true : null),
      30_000,
    );
    // the new leader compiles the same two-sided map from etcd: every viewer keeps its side
    await waitFor(
      "the new leader confirmed KV",
      () => (standby.pusher.status.document().pushed_revision !== null ? true : null),
      30_000,
    );
    expect(before.filter((x) => x.endsWith(":canary/gru-2")).length).toBeGreaterThan(0);
    expect(await sides()).toEqual(before);
    expect(observer.output()).not.toContain("canary-rolled-back");
  }, 120_000);
});
