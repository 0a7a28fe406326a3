import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { KvSink } from "../../adapters/kv/kv-sink.js";
import { readPrefix as readPrefixSnapshot } from "../../adapters/prefix-read.js";
import {
  type CompiledMap,
  compile,
  DEFAULT_FLOOR_POOL,
  DEFAULT_ORIGIN_TEMPLATE,
  parseMap,
  sameRouting,
} from "../../core/index.js";
import { systemClock } from "../../pusher/clock.js";
import { createEtcdClient, createWatchClient } from "../../pusher/etcd-client.js";
import { createPusher, type Pusher, type PusherTuning } from "../../pusher/pusher.js";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { startTcpProxy, type TcpProxy } from "../../testkit/tcp-proxy.js";
import { MemoryKv } from "../helpers/memory-kv.js";

/** A unique routing prefix and election key for one test. */
export function uniqueNames(): { prefix: string; electionKey: string } {
  const id = randomUUID().slice(0, 8);
  return { prefix: `/t-${id}/routing/v1/`, electionKey: `/t-${id}/pusher/leader` };
}

/** A plain etcd3 client for the test's own writes. */
export function testClient(endpoint: string): Etcd3 {
  return new Etcd3({ hosts: endpoint });
}

/** Writes a small valid routing state: three healthy pools, `_default` and `DE`. */
export async function seedRouting(client: Etcd3, prefix: string): Promise<void> {
  const put = (k: string, v: unknown) =>
    client.put(`${prefix}${k}`).value(typeof v === "string" ? v : JSON.stringify(v));
  for (const pool of ["fra-1", "ams-1", "par-1"]) {
    await put(`pool/${pool}`, { origin: `https://${pool}.example.net` });
    await put(`health/${pool}`, { status: "healthy" });
  }
  await put("country/_default", { primary: "ams-1", fallbacks: ["par-1"] });
  await put("country/DE", { primary: "fra-1", fallbacks: ["ams-1", "par-1"] });
  await put("epoch", "1");
}

/** Compiles what etcd holds now, as the pusher would (no previous map). */
export async function compileNow(client: Etcd3, prefix: string): Promise<CompiledMap> {
  const snap = await readPrefixSnapshot(client, prefix);
  return compile(snap, {
    carried: null,
    prefix,
    floorPool: DEFAULT_FLOOR_POOL,
    originTemplate: DEFAULT_ORIGIN_TEMPLATE,
    now: new Date(),
  }).map;
}

/** The `routes` map currently in a KV sink. */
export async function kvRoutes(kv: KvSink): Promise<CompiledMap | null> {
  const text = await kv.get("routes");
  return text === null ? null : parseMap(text);
}

/**
 * The etcd revision KV is known to reflect: `meta.rev` (the revision the pusher last confirmed
 * the map against) or `routes.rev` (where routing last changed), whichever is higher; 0 when
 * neither is there (docs/reference.md §3).
 */
export async function kvRevision(kv: KvSink): Promise<number> {
  const [routes, meta] = await Promise.all([kvRoutes(kv), kv.get("meta")]);
  const metaRev = meta === null ? 0 : Number((JSON.parse(meta) as { rev?: unknown }).rev ?? 0);
  return Math.max(routes?.rev ?? 0, Number.isFinite(metaRev) ? metaRev : 0);
}

/** Polls `fn` until it returns a truthy value, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  fn: () => T | Promise<T>,
  timeoutMs = 15_000,
  intervalMs = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    }
    await sleep(intervalMs);
  }
}

/** Waits until KV reflects at least `rev` (`kvRevision`) and routes like a fresh compile of etcd. */
export async function kvConverged(
  client: Etcd3,
  kv: KvSink,
  prefix: string,
  rev = 0,
  timeoutMs = 20_000,
): Promise<CompiledMap> {
  return waitFor(
    "KV to match etcd",
    async () => {
      const inKv = await kvRoutes(kv);
      if (!inKv || (await kvRevision(kv)) < rev) return null;
      // Histories are asserted where they matter; here only the routing is compared.
      const fresh = { ...(await compileNow(client, prefix)), history: inKv.history };
      return sameRouting(inKv, fresh) ? inKv : null;
    },
    timeoutMs,
  );
}

/** A pusher under test with its own etcd client and (by default) a memory KV. */
export interface PusherUnderTest {
  readonly pusher: Pusher;
  readonly kv: MemoryKv;
  readonly etcd: Etcd3;
  /** Graceful stop and close. */
  stop(): Promise<void>;
  /** Crash-like stop: no flush, no resign. */
  crash(): Promise<void>;
}

/** Options of `startPusher`. */
export interface StartPusherOptions {
  /** etcd endpoint(s): one member, a proxy, or a cluster's comma-separated client URLs. */
  readonly endpoint: string;
  readonly prefix: string;
  readonly electionKey: string;
  readonly kv?: MemoryKv;
  readonly id?: string;
  readonly electionTtl?: number;
  readonly heartbeatSeconds?: number;
  readonly resyncSeconds?: number;
  /** `SHED_RECOVER_SECONDS`; the pusher's default when absent. */
  readonly shedRecoverSeconds?: number;
  readonly tuning?: PusherTuning;
  readonly onIdle?: () => void;
}

/** Starts a pusher against `endpoint` (etcd or a proxy in front of it). */
export function startPusher(o: StartPusherOptions): PusherUnderTest {
  const kv = o.kv ?? new MemoryKv();
  const endpoints = o.endpoint.split(",");
  const etcd = createEtcdClient({ endpoints });
  const logger = pino({ level: process.env.PUSHER_TEST_LOG ?? "silent" });
  const pusher = createPusher({
    etcd,
    openWatchClient: () => createWatchClient({ endpoints }),
    kv,
    logger,
    clock: systemClock,
    config: {
      prefix: o.prefix,
      originTemplate: DEFAULT_ORIGIN_TEMPLATE,
      floorPool: DEFAULT_FLOOR_POOL,
      heartbeatSeconds: o.heartbeatSeconds ?? 60,
      resyncSeconds: o.resyncSeconds ?? 600,
      electionKey: o.electionKey,
      electionTtl: o.electionTtl ?? 2,
      pusherId: o.id ?? `test-${randomUUID().slice(0, 6)}`,
      ...(o.shedRecoverSeconds !== undefined ? { shedRecoverSeconds: o.shedRecoverSeconds } : {}),
    },
    tuning: { kvBackoff: { baseMs: 50, maxMs: 500 }, ...o.tuning },
    ...(o.onIdle ? { onIdle: o.onIdle } : {}),
  });
  pusher.start();
  let done = false;
  return {
    pusher,
    kv,
    etcd,
    async stop() {
      if (done) return;
      done = true;
      await pusher.stop({ flushTimeoutMs: 3_000 });
      etcd.close();
    },
    async crash() {
      if (done) return;
      done = true;
      await pusher.abandon();
      etcd.close();
    },
  };
}

/** A cleanup run after each test. */
export type Cleanup = () => Promise<void> | void;

/** What `useEtcd` provides to a test file. */
export interface EtcdSuite {
  readonly etcd: EtcdServer;
  readonly client: Etcd3;
  /** Run (newest first) after each test. */
  readonly cleanups: Cleanup[];
  /** Starts a pusher (on this etcd unless `endpoint` says otherwise), stopped after the test. */
  start(o: Omit<StartPusherOptions, "endpoint"> & { endpoint?: string }): PusherUnderTest;
  /** A TCP proxy in front of this etcd, closed after the test. */
  proxy(): Promise<TcpProxy>;
}

/** Registers a real etcd for the file, a client on it, and an after-each cleanup list. */
export function useEtcd(): EtcdSuite {
  const suite: { etcd?: EtcdServer; client?: Etcd3 } & Omit<EtcdSuite, "etcd" | "client"> = {
    cleanups: [],
    start(o) {
      const p = startPusher({ endpoint: suite.etcd?.endpoint ?? "", ...o });
      suite.cleanups.push(() => p.stop());
      return p;
    },
    async proxy() {
      const px = await startTcpProxy(suite.etcd?.clientPort ?? 0);
      suite.cleanups.push(() => px.close());
      return px;
    },
  };
  beforeAll(async () => {
    suite.etcd = await startEtcd();
    suite.client = testClient(suite.etcd.endpoint);
  });
  afterEach(async () => {
    for (const c of suite.cleanups.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    suite.client?.close();
    await suite.etcd?.stop();
  });
  // etcd and client are set before any test runs (beforeAll).
  return suite as EtcdSuite;
}
