import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bucketIndex, serializeMap, TTFB_BUCKETS_MS } from "../../core/index.js";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { type Origins, startOrigins } from "../../testkit/origins.js";
import { freePort } from "../../testkit/ports.js";
import { type PromSample, parsePromText } from "../../testkit/prom-text.js";
import { bundleWorker, compatibilityDate } from "../../testkit/worker.js";
import { buildMap, type MapSpec } from "../cases/routing-cases.js";
import { spawnBin, uniquePrefix, waitFor } from "../edgectl/cli-harness.js";

const OBSERVE_TOKEN = "e2e-observe-token-3b7d";
const DEBUG_TOKEN = "e2e-debug-token-91ce";
/** Two Workers of the same code in one workerd: two isolates that flush to one aggregator. */
const ISOLATES = ["edge-a", "edge-b"] as const;
const COUNTRIES = ["BR", "DE", "JP"] as const;

/** Each country's pool, and how long that pool's origin takes before its headers (ms). */
const SPEC: MapSpec = {
  default: { chain: ["fra-1"], source: "country/_default" },
  countries: {
    BR: { chain: ["gru-1"], source: "country/BR" },
    JP: { chain: ["nrt-1"], source: "country/JP" },
  },
};
/**
 * A fifth of each origin's answers (the slowest) set its p90, a bound's width short of the next
 * bound, so the client's own overhead (its trip through workerd) stays within a bucket of it.
 */
const DELAYS_MS: Record<string, readonly number[]> = {
  "fra-1": [10, 20, 30, 40, 310],
  "gru-1": [100, 150, 200, 250, 760],
  "nrt-1": [30, 60, 90, 120, 610],
};

/** The outcome a viewer's request got, from the origin's status (docs/reference.md §12). */
function outcomeOf(status: number): string {
  if (status >= 500) return "origin_error";
  return status >= 400 ? "client_error" : "ok";
}

describe("viewers, observed end to end: Worker in workerd, its aggregator, edgectl observe, etcd", () => {
  let etcd: EtcdServer;
  let origins: Origins;
  let dir: string;
  let edgePort: number;
  let mf: Miniflare | null = null;
  const children: ChildProcess[] = [];
  /** What the client saw: requests by `CC/pool/outcome`, and each pair's times (ms). */
  const sent = new Map<string, number>();
  const times = new Map<string, number[]>();

  /** Starts workerd with both isolates and the aggregator, storage kept in `dir`. */
  async function startEdge(): Promise<Miniflare> {
    const [script, date] = await Promise.all([bundleWorker(), compatibilityDate()]);
    const bindings = {
      OBSERVE_TOKEN,
      DEBUG_TOKEN,
      OBSERVE_FLUSH_SECONDS: "0",
      ISOLATE_CACHE_SECONDS: "0",
    };
    const m = newMiniflare({
      workers: ISOLATES.map((name, i) => ({
        name,
        modules: true,
        script,
        compatibilityDate: date,
        bindings,
        kvNamespaces: { ROUTING: "routing" },
        durableObjects: {
          OBSERVATIONS: {
            className: "ObservationAggregator",
            useSQLite: true,
            ...(i === 0 ? {} : { scriptName: ISOLATES[0] }),
          },
        },
        routes: [`${name}.test/*`],
      })),
      cf: false,
      host: "127.0.0.1",
      port: edgePort,
      resourcePersistencePath: join(dir, "edge"),
    });
    await m.ready;
    return m;
  }

  /** One viewer request through isolate `isolate`, from `country` (the debug override). */
  async function view(isolate: string, country: string, path: string): Promise<void> {
    if (!mf) throw new Error("the edge is not running");
    const started = performance.now();
    const res = await mf.dispatchFetch(`http://${isolate}.test${path}`, {
      headers: { "X-Edge-Debug-Token": DEBUG_TOKEN, "X-Edge-Debug-Country": country },
      redirect: "manual",
    });
    await res.text();
    const ms = performance.now() - started;
    const pool = res.headers.get("x-edge-pool");
    expect(pool, `${country} ${path}: answered by a pool`).not.toBeNull();
    expect(res.headers.get("x-edge-country")).toBe(country);
    const key = `${country}/${pool}`;
    sent.set(
      `${key}/${outcomeOf(res.status)}`,
      (sent.get(`${key}/${outcomeOf(res.status)}`) ?? 0) + 1,
    );
    times.set(key, [...(times.get(key) ?? []), ms]);
  }

  /** `n` requests spread over every country and isolate, a few at a time; some 4xx and 5xx. */
  async function viewers(n: number): Promise<void> {
    let next = 0;
    const one = async () => {
      for (let i = next++; i < n; i = next++) {
        const country = COUNTRIES[i % COUNTRIES.length] ?? "DE";
        const isolate = ISOLATES[Math.floor(i / COUNTRIES.length) % ISOLATES.length] ?? "edge-a";
        const path = i % 17 === 0 ? "/status/404" : i % 23 === 0 ? "/status/500" : `/seg/${i}.ts`;
        await view(isolate, country, path);
      }
    };
    await Promise.all(Array.from({ length: 6 }, one));
  }

  /** One running `edgectl observe` (the real bin) on `--state`, and its /metrics. */
  async function startObserver(prefix: string) {
    const port = await freePort();
    const child = spawnBin(
      [
        "observe",
        "--edge",
        `http://127.0.0.1:${edgePort}`,
        "--interval",
        "0.25",
        "--min-samples",
        "20",
        "--state",
        join(dir, "observer-state.json"),
        "--listen",
        `127.0.0.1:${port}`,
      ],
      { ETCD_ENDPOINTS: etcd.endpoint, ROUTING_PREFIX: prefix, OBSERVE_TOKEN },
    );
    children.push(child);
    let out = "";
    child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const base = `http://127.0.0.1:${port}`;
    const status = async () =>
      (await (await fetch(`${base}/status`)).json()) as Record<string, unknown>;
    expect(
      await waitFor(async () => (await status().catch(() => null))?.status === "ok", 30_000),
      out,
    ).toBe(true);
    return {
      scrape: async (): Promise<PromSample[]> =>
        parsePromText(await (await fetch(`${base}/metrics`)).text()),
      output: () => out,
      stop: async () => {
        child.kill("SIGTERM");
        return exited;
      },
    };
  }

  /** The observer's `edge_viewer_requests_total`, by `CC/pool/outcome`, zeros left out. */
  function counted(samples: PromSample[]): Map<string, number> {
    const out = new Map<string, number>();
    for (const s of samples)
      if (s.name === "edge_viewer_requests_total" && s.value > 0)
        out.set(`${s.labels.country}/${s.labels.pool}/${s.labels.outcome}`, s.value);
    return out;
  }

  /** Waits until the observer's counters are exactly what the client sent, then holds a moment. */
  async function expectCountedExactly(obs: { scrape(): Promise<PromSample[]> }): Promise<void> {
    const want = Object.fromEntries([...sent].sort());
    const same = async () =>
      JSON.stringify(Object.fromEntries([...counted(await obs.scrape())].sort())) ===
      JSON.stringify(want);
    const reached = await waitFor(same, 30_000);
    expect(Object.fromEntries([...counted(await obs.scrape())].sort())).toEqual(want);
    expect(reached).toBe(true);
    // re-reads of the same minutes add nothing
    await sleep(1_000);
    expect(Object.fromEntries([...counted(await obs.scrape())].sort())).toEqual(want);
  }

  /** The bucket of the observer's p90 of `edge_viewer_ttfb_seconds` for a pair, and its count. */
  function observedP90Bucket(samples: PromSample[], country: string, pool: string) {
    const buckets = samples
      .filter(
        (s) =>
          s.name === "edge_viewer_ttfb_seconds_bucket" &&
          s.labels.country === country &&
          s.labels.pool === pool,
      )
      .map((s) => ({ le: s.labels.le === "+Inf" ? Infinity : Number(s.labels.le), n: s.value }))
      .sort((a, b) => a.le - b.le);
    const total = buckets.at(-1)?.n ?? 0;
    const at = buckets.findIndex((b) => b.n >= Math.ceil(0.9 * total));
    return { index: at, total };
  }

  beforeAll(async () => {
    etcd = await startEtcd();
    origins = await startOrigins(Object.keys(DELAYS_MS));
    for (const o of origins.all) {
      let i = 0;
      const delays = DELAYS_MS[o.name] ?? [0];
      o.respond((req) => {
        const m = /^\/status\/(\d{3})/.exec(req.url);
        const delayMs = delays[i++ % delays.length] ?? 0;
        return { status: m ? Number(m[1]) : 200, body: "segment", delayMs };
      });
    }
    dir = mkdtempSync(join(tmpdir(), "viewers-observed-"));
    edgePort = await freePort();
    mf = await startEdge();
    const kv = await mf.getKVNamespace("ROUTING", ISOLATES[0]);
    await kv.put(
      "routes",
      serializeMap(buildMap(SPEC, { rev: 1, originOf: (p) => origins.get(p).url })),
    );
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    await mf?.dispose();
    await origins?.close();
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts every request exactly per (country, pool, outcome) across isolates, with the client's p90 to a bucket, through restarts of the observer and of the aggregator", async () => {
    // every isolate has read the map; what these requests recorded is before the observer
    for (const isolate of ISOLATES)
      expect(
        await waitFor(async () => {
          const res = await mf?.dispatchFetch(`http://${isolate}.test/warm`);
          await res?.text();
          return res?.status === 200;
        }, 15_000),
      ).toBe(true);
    await sleep(500);
    const prefix = uniquePrefix("viewers-observed");
    let obs = await startObserver(prefix);

    await viewers(180);
    await expectCountedExactly(obs);
    const samples = await obs.scrape();
    for (const [key, ms] of times) {
      const [country = "", pool = ""] = key.split("/");
      const sorted = [...ms].sort((a, b) => a - b);
      const clientP90 = sorted[Math.ceil(0.9 * sorted.length) - 1] ?? 0;
      const edge = observedP90Bucket(samples, country, pool);
      expect(edge.total, key).toBe(ms.length);
      // the client's time includes the trip through workerd: never below, at most a bucket above
      const client = bucketIndex(TTFB_BUCKETS_MS, clientP90);
      expect(
        Math.abs(client - edge.index),
        `${key}: client p90 ${clientP90} ms`,
      ).toBeLessThanOrEqual(1);
    }

    // observed/{CC}/{pool}: the p90 of the same histograms, under the observer's lease
    const client = new Etcd3({ hosts: etcd.endpoint });
    try {
      for (const [key, ms] of times) {
        const sorted = [...ms].sort((a, b) => a - b);
        const clientP90 = sorted[Math.ceil(0.9 * sorted.length) - 1] ?? 0;
        const written = await waitFor(
          async () => (await client.get(`${prefix}observed/${key}`).string()) !== null,
          10_000,
        );
        expect(written, `observed/${key}`).toBe(true);
        const kv = (await client.get(`${prefix}observed/${key}`).exec()).kvs[0];
        expect(kv?.lease).not.toBe("0");
        const value = JSON.parse(kv?.value.toString() ?? "{}") as { p90_ms: number };
        expect(TTFB_BUCKETS_MS).toContain(value.p90_ms);
        const off = TTFB_BUCKETS_MS.indexOf(value.p90_ms) - bucketIndex(TTFB_BUCKETS_MS, clientP90);
        expect(Math.abs(off), `observed/${key} p90 ${value.p90_ms}`).toBeLessThanOrEqual(1);
      }
    } finally {
      client.close();
    }

    // the observer restarts on its state file; viewers keep coming while it is down
    expect(await obs.stop()).toBe(0);
    await viewers(60);
    obs = await startObserver(prefix);
    await expectCountedExactly(obs);

    // workerd restarts (the aggregator and both isolates); its Durable Object storage stays
    await mf?.dispose();
    mf = await startEdge();
    await viewers(60);
    await expectCountedExactly(obs);
    const after = await obs.scrape();
    expect(
      after.find((s) => s.name === "edge_observer_edge_resets_total")?.value,
      "no minute lost its sums",
    ).toBe(0);
    expect(obs.output()).not.toContain(OBSERVE_TOKEN);
    expect(await obs.stop()).toBe(0);
  });
});
