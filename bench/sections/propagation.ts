import { setTimeout as sleep } from "node:timers/promises";
import type { Cleanup } from "../lib/cleanup.js";
import { putOne } from "../lib/etcd-load.js";
import { scaleFixture } from "../lib/fixture.js";
import { openFloorParts } from "../lib/floor-parts.js";
import { revisionOf } from "../lib/kv-reader.js";
import { startOriginProcess } from "../lib/origin-process.js";
import { pollUntil } from "../lib/poll-until.js";
import { openRelayFloor } from "../lib/relay-floor.js";
import { startStack } from "../lib/stack.js";
import { medianWithCi, round, summarize } from "../lib/stats.js";
import { startBenchWorkerd } from "../lib/workerd.js";
import type { PropagationResult } from "./propagation-result.js";

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
const roundCi = ([lo, hi]: readonly [number, number]) => [round(lo, 2), round(hi, 2)] as const;
/** The bench's PUSHER_ELECTION_TTL (5 s) and a second. */
const ELECTION_SETTLE_MS = 6_000;
const POLL_MS = 2;
const TIMEOUT_MS = 10_000;

/**
 * After a quiet second, one etcd put flips `country/DE` between two pools; measured until KV's
 * `routes` carries the new revision and until a client of the Worker sees `X-Edge-Pool` flip.
 * The floor, in the same iteration (before or after the pusher's sample, alternately): one etcd
 * put under a sibling prefix, relayed to KV by the minimal relay (`bench/lib/relay-child.ts`: one
 * watch, one put of a value the size of `routes`), timed like the pusher: from the put until the
 * same reader, polling the same way, sees the value.
 */
export async function propagation(o: PropagationOptions): Promise<PropagationResult> {
  const origin = await startOriginProcess(o.cleanup);
  const pools = 20;
  const fixture = scaleFixture({ keys: 0, pools, origin: () => origin.url });
  const stack = await startStack(o.cleanup, fixture);
  const firstPushAt = performance.now();
  const { client, prefix, persistDir, namespaceId } = stack;
  let readErrors = 0;
  // A read may fail when it races a writer replacing the value's blob: it has not seen it yet.
  const get = async (key: string) => {
    try {
      return await stack.reader.get(key);
    } catch {
      readErrors++;
      return null;
    }
  };
  const poll = <T>(fn: () => Promise<T | null>) =>
    pollUntil(fn, { timeoutMs: TIMEOUT_MS, intervalMs: POLL_MS });

  const workerd = await startBenchWorkerd({
    persistDir,
    namespaceId,
    passOrigin: origin.url,
    vars: { ISOLATE_CACHE_SECONDS: "0" },
    cleanup: o.cleanup,
  });
  const edgePool = async (): Promise<string | null> => {
    const res = await workerd.edgeFetch("/probe", "DE");
    await res.arrayBuffer();
    return res.headers.get("x-edge-pool");
  };

  // Floors: keys outside the routing prefix, so the pusher stays quiet while they are sampled.
  const root = prefix.replace(/routing\/v1\/$/, "");
  const relay = await openRelayFloor({ stack, get, poll, cleanup: o.cleanup });
  const readRelay = await openRelayFloor({
    stack,
    get,
    poll,
    cleanup: o.cleanup,
    relay: { name: "relay-read", readRouting: true },
  });
  const parts = await openFloorParts({
    client,
    etcdEndpoint: stack.etcd.endpoint,
    key: `${root}floor/probe`,
    persistDir,
    namespaceId,
    reader: stack.reader,
    pollMs: POLL_MS,
    cleanup: o.cleanup,
  });

  // Electing itself, the pusher schedules one more look at KV after the election TTL (5 s here),
  // for a former leader's late write; that re-read writes `routes` again when etcd moved
  // meanwhile, taking the key's write slot. Measured after it, so a change never waits for it.
  await sleep(Math.max(0, firstPushAt + ELECTION_SETTLE_MS - performance.now()));
  const warnedBefore = stack.pusher.warnings.length;
  const writesFrom = Date.now();
  const prop: number[] = [];
  const edge: number[] = [];
  const logged: number[] = [];
  const floorEtcd: number[] = [];
  const floorKv: number[] = [];
  const floorParts: number[] = [];
  const floor: number[] = [];
  const readFloor: number[] = [];
  const pairedRatios: number[] = [];
  const readPairedRatios: number[] = [];
  /** The slowest change seen at the Worker, and when the pusher logged its push. */
  let edgeSlowest = { ms: Number.NEGATIVE_INFINITY, loggedMs: Number.NaN };
  const pools2 = ["p001", "p002"] as const;
  const total = o.changes + o.edgeChanges;
  let edgeLeft = o.edgeChanges;
  for (let i = 0; i < total; i++) {
    // Interleave: a change is watched either at KV or at the Worker, never both, so the
    // figure pays for one poller, as its floor does.
    const atEdge = edgeLeft > 0 && (i % 2 === 1 || total - i <= edgeLeft);
    if (atEdge) edgeLeft--;
    await sleep(QUIET_MS);
    // Which of the two goes first after the quiet second alternates every two iterations, so
    // each sees both positions at KV and at the Worker alike.
    const relayFirst = i % 4 < 2;
    if (relayFirst) {
      floor.push(await relay.sample(String(i)));
      readFloor.push(await readRelay.sample(String(i)));
    }

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
      ? await poll(async () => ((await edgePool()) === primary ? performance.now() : null))
      : await poll(async () => {
          const r = revisionOf(await get("routes"));
          return r !== null && r >= rev ? performance.now() : null;
        });
    if (seenAt === null) throw new Error(`change ${i} did not propagate`);
    const push = await stack.pusher.waitForRoutes(await revP, TIMEOUT_MS);
    const pushMs = seenAt - t0;
    (atEdge ? edge : prop).push(pushMs);
    const loggedMs = push ? push.doneAt - wall0 : Number.NaN;
    if (atEdge && pushMs > edgeSlowest.ms) edgeSlowest = { ms: pushMs, loggedMs };
    if (!atEdge && push) logged.push(loggedMs);

    if (!relayFirst) {
      readFloor.push(await readRelay.sample(String(i)));
      floor.push(await relay.sample(String(i)));
    }
    const relayMs = floor[floor.length - 1];
    const readRelayMs = readFloor[readFloor.length - 1];
    if (!atEdge && relayMs !== undefined && relayMs > 0) pairedRatios.push(pushMs / relayMs);
    if (!atEdge && readRelayMs !== undefined && readRelayMs > 0)
      readPairedRatios.push(pushMs / readRelayMs);
    // The parts timed alone, last: they run with nothing else going on.
    const etcdMs = await parts.watchMs(String(i));
    const kvMs = await parts.putMs(`${i}:${(await get("routes")) ?? ""}`);
    floorEtcd.push(etcdMs);
    floorKv.push(kvMs);
    floorParts.push(etcdMs + kvMs);
    if ((i + 1) % 15 === 0) {
      o.log(
        `  ${i + 1}/${total}: KV p50 ${summarize(prop).p50.toFixed(1)} ms, edge p50 ${summarize(edge).p50.toFixed(1)} ms, relay floor p50 ${summarize(floor).p50.toFixed(1)} ms (parts ${summarize(floorParts).p50.toFixed(1)})`,
      );
    }
  }
  const inRelay = await relay.breakdown();
  const warnings: Record<string, number> = {};
  for (const w of stack.pusher.warnings.slice(warnedBefore))
    warnings[w.msg] = (warnings[w.msg] ?? 0) + 1;
  const p = summarize(prop);
  const e = summarize(edge);
  const f = summarize(floor);
  const paired = medianWithCi(pairedRatios);
  const readPaired = medianWithCi(readPairedRatios);
  return {
    propagation_ms: {
      p50: round(p.p50),
      p99: round(p.p99),
      max: round(p.max),
      floor_p50: round(f.p50),
      floor_p99: round(f.p99),
      ratio_p50: round(p.p50 / f.p50, 2),
      ratio_paired_p50: round(paired.p50, 2),
      ratio_paired_ci95: roundCi(paired.ci95),
      floor_relay_watch_p50: round(summarize(inRelay.watch).p50),
      floor_relay_put_p50: round(summarize(inRelay.put).p50),
      read_relay_p50: round(summarize(readFloor).p50),
      read_relay_paired_p50: round(readPaired.p50, 2),
      read_relay_paired_ci95: roundCi(readPaired.ci95),
      floor_parts_p50: round(summarize(floorParts).p50),
      floor_etcd_watch_p50: round(summarize(floorEtcd).p50),
      floor_kv_put_p50: round(summarize(floorKv).p50),
      logged_p50: round(summarize(logged).p50),
      read_errors: readErrors,
      routes_writes: stack.pusher.routesWrites(writesFrom).length,
      pusher_warnings: warnings,
      changes: p.n,
    },
    edge_propagation_ms: {
      p50: round(e.p50),
      p99: round(e.p99),
      max: round(e.max),
      max_push_logged: round(edgeSlowest.loggedMs),
      ratio_p50: round(e.p50 / f.p50, 2),
    },
  };
}
