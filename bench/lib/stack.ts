import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Etcd3 } from "etcd3";
import type { KvSink } from "../../src/adapters/kv/index.js";
import { type EtcdServer, startEtcd } from "../../test/helpers/etcd.js";
import { freePort } from "../../test/helpers/ports.js";
import type { Cleanup } from "./cleanup.js";
import { putAll } from "./etcd-load.js";
import type { FixtureEntry } from "./fixture.js";
import { openKvReader, revisionOf } from "./kv-reader.js";
import { type PusherProcess, startPusherProcess } from "./pusher-process.js";
import { pollUntil } from "./sleep.js";

/** etcd + the pusher as a child process + a second reader of the pusher's local KV namespace. */
export interface Stack {
  readonly etcd: EtcdServer;
  /** The bench's own etcd client (writes changes, reads floors). */
  readonly client: Etcd3;
  readonly prefix: string;
  readonly persistDir: string;
  readonly namespaceId: string;
  readonly pusher: PusherProcess;
  readonly reader: KvSink;
  /** Revision after the fixture was written. */
  readonly seedRevision: number;
  /** Polls `routes` in KV until its `rev` ≥ `rev`; resolves to the ms waited or null. */
  waitKvRevision(rev: number, timeoutMs: number, intervalMs?: number): Promise<number | null>;
}

/** Starts etcd, writes the fixture, starts the pusher and waits until KV holds the fixture. */
export async function startStack(
  cleanup: Cleanup,
  fixture: readonly FixtureEntry[],
  opts: { readonly pusherEnv?: Readonly<Record<string, string>> } = {},
): Promise<Stack> {
  const id = randomUUID().slice(0, 8);
  const prefix = `/bench-${id}/routing/v1/`;
  const etcd = await startEtcd();
  cleanup.add(`etcd ${etcd.clientPort}`, () => etcd.stop());
  const client = new Etcd3({ hosts: etcd.endpoint });
  cleanup.add("bench etcd client", () => client.close());
  const seedRevision = await putAll(client, prefix, fixture);

  const persistDir = mkdtempSync(join(tmpdir(), "edge-bench-kv-"));
  cleanup.add("kv persist dir", () => rmSync(persistDir, { recursive: true, force: true }));
  const namespaceId = `bench-${id}`;
  const pusher = await startPusherProcess({
    etcdEndpoint: etcd.endpoint,
    prefix,
    persistDir,
    namespaceId,
    electionKey: `/bench-${id}/pusher/leader`,
    port: await freePort(),
    cleanup,
    ...(opts.pusherEnv ? { env: opts.pusherEnv } : {}),
  });
  const reader = await openKvReader(persistDir, namespaceId, cleanup);
  const waitKvRevision = async (rev: number, timeoutMs: number, intervalMs = 0) => {
    const t0 = performance.now();
    const seen = await pollUntil(
      async () => {
        const r = revisionOf(await reader.get("routes"));
        return r !== null && r >= rev ? r : null;
      },
      { timeoutMs, intervalMs },
    );
    return seen === null ? null : performance.now() - t0;
  };
  if ((await waitKvRevision(seedRevision, 60_000, 20)) === null) {
    throw new Error("the pusher never wrote the fixture to KV");
  }
  return {
    etcd,
    client,
    prefix,
    persistDir,
    namespaceId,
    pusher,
    reader,
    seedRevision,
    waitKvRevision,
  };
}
