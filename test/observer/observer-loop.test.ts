import { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EtcdMembers } from "../../adapters/etcd-members.js";
import { routingKeys } from "../../core/index.js";
import { cliSettingsFromEnv } from "../../edgectl/cli/cli-settings.js";
import { edgeReader } from "../../observer/edge-reader.js";
import { ObservedKeys } from "../../observer/observed-keys.js";
import { type ObserveEvent, runObserver } from "../../observer/observer-loop.js";
import { ObserverMetrics } from "../../observer/observer-metrics.js";
import { ObserverStatus } from "../../observer/observer-status.js";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { parsePromText, sampleValue } from "../../testkit/prom-text.js";
import { uniquePrefix, waitFor } from "../edgectl/cli-harness.js";
import { ObservationsEdge } from "../helpers/observations-edge.js";

let etcd: EtcdServer;
let client: Etcd3;
let edge: ObservationsEdge;

beforeAll(async () => {
  etcd = await startEtcd();
  client = new Etcd3({ hosts: etcd.endpoint });
  edge = await new ObservationsEdge("t0ken").start();
});
afterAll(async () => {
  await edge?.stop();
  client?.close();
  await etcd?.stop();
});

/**
 * runObserver against a loopback edge (the shared one unless `at` names another, with the clock
 * both read) and real etcd, stale after `staleMs`.
 */
function observe(
  prefix: string,
  staleMs: number,
  at: { readonly edge: ObservationsEdge; readonly now?: () => number } = { edge },
) {
  const edge = at.edge;
  const settings = cliSettingsFromEnv({ ETCD_ENDPOINTS: etcd.endpoint, ROUTING_PREFIX: prefix });
  const members = EtcdMembers.open(settings);
  const events: ObserveEvent[] = [];
  const log = (e: ObserveEvent) => events.push(e);
  const edgeName = edge.url;
  const keys = new ObservedKeys(members, routingKeys(prefix).observed, 2, {
    registered: (lease) => log({ event: "registered", edge: edgeName, lease }),
    written: (o) => log({ event: "observed-written", edge: edgeName, ...o }),
    removed: (country, pool) => log({ event: "observed-removed", edge: edgeName, country, pool }),
    leaseLost: () => log({ event: "lease-lost", edge: edgeName }),
  });
  const status = new ObserverStatus(edgeName);
  const metrics = new ObserverMetrics();
  const stop = new AbortController();
  let pollsDone = 0;
  const running = runObserver({
    edge: edgeName,
    read: edgeReader({ edge: new URL(edge.url), token: "t0ken", timeoutMs: 1000 }),
    keys,
    minSamples: 50,
    intervalMs: 100,
    staleMs,
    status,
    metrics,
    log,
    signal: stop.signal,
    ...(at.now ? { now: at.now } : {}),
    pollDone: () => {
      pollsDone++;
    },
  }).finally(() => members.close());
  return {
    events,
    status,
    metrics,
    pollsDone: () => pollsDone,
    stop: () => {
      stop.abort();
      return running;
    },
  };
}

describe("runObserver", () => {
  it("lets its observations go with the lease once the edge has failed for the staleness limit, and writes them again when it answers", async () => {
    const prefix = uniquePrefix("observer-stale");
    const key = `${prefix}observed/BR/us-east`;
    edge.setTtfb("BR", "us-east", { p50: 900, p90: 4000, p99: 4200 });
    edge.record("BR", "us-east", { outcomes: { ok: 80 } });
    const o = observe(prefix, 800);
    try {
      expect(await waitFor(async () => (await client.get(key).string()) !== null, 10_000)).toBe(
        true,
      );
      edge.mode = "wrong-token";
      expect(await waitFor(() => o.status.released, 5_000)).toBe(true);
      expect(o.status.document()).toMatchObject({
        status: "failing",
        reason: "unauthorized",
        registered: false,
        released: true,
      });
      // no delete, no revoke: the lease runs out by itself (TTL 2 s) and the key goes with it
      expect(await waitFor(async () => (await client.get(key).string()) === null, 10_000)).toBe(
        true,
      );
      const writes = parsePromText(await o.metrics.registry.metrics());
      expect(sampleValue(writes, "edge_observer_etcd_writes_total", { op: "delete" })).toBe(0);
      expect(o.events.map((e) => e.event)).toContain("released");

      edge.mode = "ok";
      expect(await waitFor(async () => (await client.get(key).string()) !== null, 10_000)).toBe(
        true,
      );
      expect(o.status.document()).toMatchObject({
        status: "ok",
        registered: true,
        released: false,
      });
    } finally {
      edge.mode = "ok";
      await o.stop();
      edge.restartAggregator();
    }
    // stopped: the lease is revoked
    expect(await client.get(key).string()).toBeNull();
  });

  it("exports the edge's cache results on /metrics and writes the hit ratio into observed/", async () => {
    const prefix = uniquePrefix("observer-cache");
    const key = `${prefix}observed/CZ/ams-1`;
    edge.record("CZ", "ams-1", { outcomes: { ok: 60 }, cache: { hit: 45, miss: 15 } });
    const o = observe(prefix, 60_000);
    try {
      expect(await waitFor(async () => (await client.get(key).string()) !== null, 10_000)).toBe(
        true,
      );
      expect(JSON.parse((await client.get(key).string()) ?? "")).toMatchObject({
        samples: 60,
        hit_ratio: 0.75,
      });
      // What the edge held before the first reading is the baseline; what comes after counts.
      edge.record("CZ", "ams-1", { outcomes: { ok: 12 }, cache: { hit: 10, bypass: 2 } });
      const hit = async () =>
        sampleValue(parsePromText(await o.metrics.registry.metrics()), "edge_viewer_cache_total", {
          country: "CZ",
          pool: "ams-1",
          result: "hit",
        });
      expect(await waitFor(async () => (await hit()) === 10, 10_000)).toBe(true);
      const text = parsePromText(await o.metrics.registry.metrics());
      expect(
        sampleValue(text, "edge_viewer_cache_total", {
          country: "CZ",
          pool: "ams-1",
          result: "bypass",
        }),
      ).toBe(2);
      expect(o.metrics.totalsJson().cache).toEqual(
        expect.arrayContaining([{ country: "CZ", pool: "ams-1", result: "hit", n: 10 }]),
      );
    } finally {
      await o.stop();
      edge.restartAggregator();
    }
  });

  it("a pair without viewers for the edge's 16 minutes leaves /metrics and the totals the state file keeps", async () => {
    let now = Date.now();
    const clock = () => now;
    const edge16 = await new ObservationsEdge("t0ken", clock).start();
    const o = observe(uniquePrefix("observer-forget"), 60_000, { edge: edge16, now: clock });
    const requests = async (country: string, pool: string) =>
      sampleValue(parsePromText(await o.metrics.registry.metrics()), "edge_viewer_requests_total", {
        country,
        pool,
        outcome: "ok",
      });
    try {
      await waitFor(async () => edge16.polls.length > 0, 10_000);
      edge16.record("BR", "tmp-3", { outcomes: { ok: 40 } });
      edge16.record("DE", "fra-1", { outcomes: { ok: 20 } });
      expect(await waitFor(async () => (await requests("BR", "tmp-3")) === 40, 10_000)).toBe(true);
      now += 15 * 60_000;
      edge16.record("DE", "fra-1", { outcomes: { ok: 5 } });
      expect(await waitFor(async () => (await requests("DE", "fra-1")) === 25, 10_000)).toBe(true);
      expect(await requests("BR", "tmp-3")).toBe(40);
      now += 60_000;
      edge16.record("DE", "fra-1", { outcomes: { ok: 5 } });
      expect(await waitFor(async () => (await requests("DE", "fra-1")) === 30, 10_000)).toBe(true);
      expect(await requests("BR", "tmp-3")).toBeUndefined();
      expect(o.metrics.totalsJson().requests.map((r) => r.pool)).toEqual(["fra-1"]);
      // each poll ends in pollDone (the idle heap trim's cue), answered or not
      expect(o.pollsDone()).toBeGreaterThanOrEqual(edge16.polls.length - 1);
    } finally {
      await o.stop();
      await edge16.stop();
    }
  });

  it("a lease etcd lost is granted again and every key rewritten", async () => {
    const prefix = uniquePrefix("observer-lease");
    const key = `${prefix}observed/DE/fra-1`;
    edge.setTtfb("DE", "fra-1", { p50: 40, p90: 80, p99: 100 });
    edge.record("DE", "fra-1", { outcomes: { ok: 70 } });
    const o = observe(prefix, 60_000);
    try {
      expect(await waitFor(async () => (await client.get(key).string()) !== null, 10_000)).toBe(
        true,
      );
      const lease = (await client.get(key).exec()).kvs[0]?.lease ?? "0";
      await client.leaseClient.leaseRevoke({ ID: lease });
      expect(
        await waitFor(async () => {
          const now = (await client.get(key).exec()).kvs[0]?.lease;
          return now !== undefined && now !== lease;
        }, 10_000),
      ).toBe(true);
      expect(o.events.map((e) => e.event)).toContain("lease-lost");
    } finally {
      await o.stop();
      edge.restartAggregator();
    }
  });
});
