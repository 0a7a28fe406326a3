import { createLocalSink } from "../../adapters/kv/index.js";
import type { Cleanup } from "../lib/cleanup.js";
import { putOne } from "../lib/etcd-load.js";
import { scaleFixture } from "../lib/fixture.js";
import { revisionOf } from "../lib/kv-reader.js";
import { startOriginProcess } from "../lib/origin-process.js";
import { pollUntil, sleep } from "../lib/sleep.js";
import { startStack } from "../lib/stack.js";
import { round, summarize } from "../lib/stats.js";
import { startBenchWorkerd } from "../lib/workerd.js";

/** `propagation_ms` and `edge_propagation_ms` in results.json. */
export interface PropagationResult {
  readonly propagation_ms: {
    readonly p50: number;
    readonly p99: number;
    readonly max: number;
    readonly floor_p50: number;
    readonly ratio_p50: number;
    readonly floor_etcd_watch_p50: number;
    readonly floor_kv_put_p50: number;
    /** put → the pusher's own "push" log line (no polling in the figure). */
    readonly logged_p50: number;
    readonly changes: number;
  };
  readonly edge_propagation_ms: {
    readonly p50: number;
    readonly p99: number;
    readonly max: number;
    readonly ratio_p50: number;
  };
}

/** How many changes to measure. */
export interface PropagationOptions {
  /** Changes measured at KV. */
  readonly changes: number;
  /** Changes measured at the Worker, interleaved with the KV ones (one poller at a time). */
  readonly edgeChanges: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const QUIET_MS = 1_050;
const POLL_MS = 2;
const TIMEOUT_MS = 10_000;

/**
 * After a quiet second, one etcd put flips `country/DE` between two pools; measured until KV's
 * `routes` carries the new revision and until a client of the Worker sees `X-Edge-Pool` flip.
 * The floor, sampled in the same iteration: put → watch event in a second etcd client, plus one
 * KV put of a same-sized value on the same persisted namespace, seen by the same reader.
 */
export async function propagation(o: PropagationOptions): Promise<PropagationResult> {
  const origin = await startOriginProcess(o.cleanup);
  const pools = 20;
  const fixture = scaleFixture({ keys: 0, pools, origin: () => origin.url });
  const stack = await startStack(o.cleanup, fixture);
  const { client, reader, prefix } = stack;

  const workerd = await startBenchWorkerd({
    persistDir: stack.persistDir,
    namespaceId: stack.namespaceId,
    passOrigin: origin.url,
    vars: { ISOLATE_CACHE_SECONDS: "0" },
    cleanup: o.cleanup,
  });
  const edgePool = async (): Promise<string | null> => {
    const res = await workerd.edgeFetch("/probe", "DE");
    await res.arrayBuffer();
    return res.headers.get("x-edge-pool");
  };

  // Floor: a watcher in another etcd client, on a key outside the routing prefix.
  const floorKey = `${prefix.replace(/routing\/v1\/$/, "")}floor/probe`;
  const { Etcd3 } = await import("etcd3");
  const watcherClient = new Etcd3({ hosts: stack.etcd.endpoint });
  o.cleanup.add("floor watcher client", () => watcherClient.close());
  const watcher = await watcherClient.watch().key(floorKey).create();
  o.cleanup.add("floor watcher", () => watcher.cancel());
  const floorWriter = await createLocalSink({
    persistDir: stack.persistDir,
    namespaceId: stack.namespaceId,
  });
  o.cleanup.add("floor kv writer", () => floorWriter.close());

  const prop: number[] = [];
  const edge: number[] = [];
  const logged: number[] = [];
  const floorEtcd: number[] = [];
  const floorKv: number[] = [];
  const floor: number[] = [];
  const pools2 = ["p001", "p002"] as const;
  const total = o.changes + o.edgeChanges;
  let edgeLeft = o.edgeChanges;
  for (let i = 0; i < total; i++) {
    // Interleave: a change is watched either at KV or at the Worker, never both, so the
    // figure pays for one poller, as its floor does.
    const atEdge = edgeLeft > 0 && (i % 2 === 1 || total - i <= edgeLeft);
    if (atEdge) edgeLeft--;
    await sleep(QUIET_MS);

    const seen = new Promise<number>((resolve) => {
      const on = (kv: { value: Buffer }) => {
        if (kv.value.toString() === String(i)) {
          watcher.off("put", on);
          resolve(performance.now());
        }
      };
      watcher.on("put", on);
    });
    const e0 = performance.now();
    await putOne(client, floorKey, String(i));
    const etcdMs = (await seen) - e0;

    const routesText = (await reader.get("routes")) ?? "";
    const probe = `${i}:${routesText}`;
    const k0 = performance.now();
    await floorWriter.putMany([{ key: "floor-probe", value: probe }]);
    const kvSeen = await pollUntil(
      async () => ((await reader.get("floor-probe")) === probe ? true : null),
      { timeoutMs: TIMEOUT_MS, intervalMs: POLL_MS },
    );
    const kvMs = performance.now() - k0;
    if (!kvSeen) throw new Error("floor KV put never became visible");

    // The floor samples touch neither the routing prefix nor `routes`: the pusher stays quiet.
    const [primary, fallback] = i % 2 === 0 ? [pools2[1], pools2[0]] : [pools2[0], pools2[1]];
    const wall0 = Date.now();
    const t0 = performance.now();
    const revP = putOne(
      client,
      `${prefix}country/DE`,
      JSON.stringify({ primary, fallbacks: [fallback] }),
    );
    let rev = Number.POSITIVE_INFINITY;
    void revP.then((r) => {
      rev = r;
    });
    const seenAt = atEdge
      ? await pollUntil(async () => ((await edgePool()) === primary ? performance.now() : null), {
          timeoutMs: TIMEOUT_MS,
          intervalMs: POLL_MS,
        })
      : await pollUntil(
          async () => {
            const r = revisionOf(await reader.get("routes"));
            return r !== null && r >= rev ? performance.now() : null;
          },
          { timeoutMs: TIMEOUT_MS, intervalMs: POLL_MS },
        );
    if (seenAt === null) throw new Error(`change ${i} did not propagate`);
    const push = await stack.pusher.waitForRoutes(await revP, TIMEOUT_MS);
    (atEdge ? edge : prop).push(seenAt - t0);
    if (push && !atEdge) logged.push(push.doneAt - wall0);
    floorEtcd.push(etcdMs);
    floorKv.push(kvMs);
    floor.push(etcdMs + kvMs);
    if ((i + 1) % 15 === 0) {
      o.log(
        `  ${i + 1}/${total}: KV p50 ${summarize(prop).p50.toFixed(1)} ms, edge p50 ${summarize(edge).p50.toFixed(1)} ms, floor p50 ${summarize(floor).p50.toFixed(1)} ms`,
      );
    }
  }
  const p = summarize(prop);
  const e = summarize(edge);
  const f = summarize(floor);
  return {
    propagation_ms: {
      p50: round(p.p50),
      p99: round(p.p99),
      max: round(p.max),
      floor_p50: round(f.p50),
      ratio_p50: round(p.p50 / f.p50, 2),
      floor_etcd_watch_p50: round(summarize(floorEtcd).p50),
      floor_kv_put_p50: round(summarize(floorKv).p50),
      logged_p50: round(summarize(logged).p50),
      changes: p.n,
    },
    edge_propagation_ms: {
      p50: round(e.p50),
      p99: round(e.p99),
      max: round(e.max),
      ratio_p50: round(e.p50 / f.p50, 2),
    },
  };
}
