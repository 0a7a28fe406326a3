import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Etcd3 } from "etcd3";
import type { EtcdServer } from "../../testkit/etcd.js";
import { freePort } from "../../testkit/ports.js";
import type { PusherProcess } from "../../testkit/pusher-process.js";
import { singleEtcd } from "../../testkit/system/etcd-side.js";
import { localKv, standinKv } from "../../testkit/system/kv-side.js";
import { cleanupOwner } from "../../testkit/system/owner.js";
import { none, startSystem } from "../../testkit/system.js";
import type { Cleanup } from "./cleanup.js";
import { putAll } from "./etcd-load.js";
import type { FixtureEntry } from "./fixture.js";
import { openKvReader, revisionOf } from "./kv-reader.js";
import { pollUntil } from "./poll-until.js";
import { startBenchPusher } from "./pusher-process.js";

/** What the bench reads KV through: the local namespace or the REST stand-in's store. */
export interface KvReader {
  get(key: string): Promise<string | null>;
}

/**
 * Which sink the pusher writes to: `local` (Miniflare in the pusher's process, plus workerd), or
 * `cloudflare` (the production code path: the REST API via the SDK, here against the local
 * stand-in `testkit/kv-standin.ts`, which runs in the bench's process).
 */
export type StackSink = "local" | "cloudflare";

/** Where a process reaches the KV stand-in's namespace (the Cloudflare API's coordinates). */
export interface KvApi {
  /** `CF_API_BASE_URL`. */
  readonly url: string;
  readonly accountId: string;
  readonly namespaceId: string;
  readonly token: string;
}

/** etcd + the pusher as a child process + a second reader of the pusher's KV namespace. */
export interface Stack {
  readonly etcd: EtcdServer;
  /** The bench's own etcd client (writes changes, reads floors). */
  readonly client: Etcd3;
  readonly prefix: string;
  readonly persistDir: string;
  readonly namespaceId: string;
  readonly pusher: PusherProcess;
  readonly sink: StackSink;
  readonly reader: KvReader;
  /** The KV stand-in the pusher writes to (the `cloudflare` sink), else null. */
  readonly kvApi: KvApi | null;
  /** Revision after the fixture was written. */
  readonly seedRevision: number;
  /** ms from spawning the pusher until KV held the fixture (its first push). */
  readonly firstPushMs: number;
  /** ms etcd took to take the fixture. */
  readonly loadMs: number;
  /**
   * Polls KV until it reflects `rev`: `routes.rev` ≥ `rev` (routing changed at or after it) or
   * `meta.rev` ≥ `rev` (the pusher confirmed `routes` against it); resolves to the ms waited or null.
   */
  waitKvRevision(rev: number, timeoutMs: number, intervalMs?: number): Promise<number | null>;
}

/** Starts etcd, writes the fixture, starts the pusher and waits until KV holds the fixture. */
export async function startStack(
  cleanup: Cleanup,
  fixture: readonly FixtureEntry[],
  opts: {
    readonly pusherEnv?: Readonly<Record<string, string>>;
    /** Default `local`. */
    readonly sink?: StackSink;
    /** The pusher's variables from the systemd unit (see `deployedEnvironment`). */
    readonly deployed?: Readonly<Record<string, string>>;
    /** How long to wait for the first push (default 60 s). */
    readonly firstPushTimeoutMs?: number;
  } = {},
): Promise<Stack> {
  const id = randomUUID().slice(0, 8);
  const sink = opts.sink ?? "local";
  const owner = cleanupOwner(cleanup);
  const system = await startSystem(owner, {
    prefix: `/bench-${id}/routing/v1/`,
    etcd: singleEtcd(),
    origins: none,
    async seed(s) {
      const client = new Etcd3({ hosts: s.etcd.endpoint });
      cleanup.add("bench etcd client", () => client.close());
      const loadStarted = performance.now();
      const revision = await putAll(client, s.prefix, fixture);
      return { client, revision, loadMs: performance.now() - loadStarted };
    },
    // The account budget is Cloudflare's; the pusher's own budget keeps it well under that.
    kv: async (o) =>
      sink === "cloudflare" ? standinKv()(o) : localKv({ namespaceId: `bench-${id}` })(o),
    async pushers(s) {
      const spawned = performance.now();
      const pusher = await startBenchPusher({
        etcdEndpoint: s.etcd.endpoint,
        prefix: s.prefix,
        electionKey: `/bench-${id}/pusher/leader`,
        port: await freePort(),
        cleanup,
        env: { ...s.pusherEnv(), ...opts.pusherEnv },
        deployed: opts.deployed ?? {},
      });
      return { pusher, spawned };
    },
    worker: none,
    heartbeats: none,
  });
  const { kv, prefix } = system;
  const seedRevision = system.seed.revision;
  const persistDir =
    "persistDir" in kv ? kv.persistDir : mkdtempSync(join(tmpdir(), "edge-bench-kv-"));
  if (!("persistDir" in kv)) {
    cleanup.add("bench work dir", () => rmSync(persistDir, { recursive: true, force: true }));
  }
  const namespaceId = kv.namespaceId ?? `bench-${id}`;
  const reader: KvReader =
    "standin" in kv
      ? { get: async (key) => kv.standin.values.get(key) ?? null }
      : await openKvReader(persistDir, namespaceId, cleanup);
  const kvApi: KvApi | null =
    "standin" in kv
      ? {
          url: kv.standin.url,
          accountId: kv.standin.accountId,
          namespaceId: kv.standin.namespaceId,
          token: kv.standin.token,
        }
      : null;
  const waitKvRevision = async (rev: number, timeoutMs: number, intervalMs = 0) => {
    const t0 = performance.now();
    const seen = await pollUntil(
      async () => {
        const r = revisionOf(await reader.get("routes"));
        if (r !== null && r >= rev) return r;
        const m = revisionOf(await reader.get("meta"));
        return r !== null && m !== null && m >= rev ? m : null;
      },
      { timeoutMs, intervalMs },
    );
    return seen === null ? null : performance.now() - t0;
  };
  const firstPushTimeoutMs = opts.firstPushTimeoutMs ?? 60_000;
  if ((await waitKvRevision(seedRevision, firstPushTimeoutMs, 20)) === null) {
    throw new Error(
      `the pusher never wrote the fixture to KV (${fixture.length} keys, waited ${firstPushTimeoutMs / 1000} s)`,
    );
  }
  const firstPushMs = performance.now() - system.pushers.spawned;
  return {
    etcd: system.etcd.server,
    client: system.seed.client,
    prefix,
    persistDir,
    namespaceId,
    pusher: system.pushers.pusher,
    sink,
    reader,
    kvApi,
    seedRevision,
    firstPushMs,
    loadMs: system.seed.loadMs,
    waitKvRevision,
  };
}
