import { setTimeout as sleep } from "node:timers/promises";
import type { KvStandin } from "../testkit/kv-standin.js";
import { freePort } from "../testkit/ports.js";
import { startWorker, type TestWorker } from "../testkit/worker.js";
import { type IsolateHeap, openIsolateHeap } from "./isolate-heap.js";

/** A non-2xx answer (or none), kept for the report. */
export interface BadAnswer {
  readonly t: number;
  readonly client: "sequential" | "concurrent";
  readonly country: string;
  readonly status: number;
  /** `X-Edge-*` headers of the answer, or the error. */
  readonly detail: string;
}

/** The Worker under workerd fed from the KV stand-in, with a sequential and a concurrent client. */
export interface EdgeClients {
  readonly worker: TestWorker;
  /** workerd's loopback socket, where `edgectl observe` polls `/__edge/observations`. */
  readonly url: string;
  /** The routing Worker's isolate heap (its inspector). */
  readonly heap: IsolateHeap;
  /** Answers by status (0: no answer). */
  readonly byStatus: Map<number, number>;
  /** The first 50 non-2xx answers. */
  readonly bad: BadAnswer[];
  /** `routes` values copied into the Worker's namespace. */
  copies(): number;
  stop(): Promise<void>;
}

/** How many requests the concurrent client keeps in flight. */
export const CONCURRENCY = 8;

/**
 * What a player sends as CMCD (CTA-5004 headers) on every `CMCD_EVERY`th request: its measured
 * throughput, and buffer starvation on every `STARVED_EVERY`th of those.
 */
export const CMCD_EVERY = 3;
export const STARVED_EVERY = 4;

function playerHeaders(n: number): Record<string, string> {
  if (n % CMCD_EVERY !== 0) return {};
  const starved = (n / CMCD_EVERY) % STARVED_EVERY === 0;
  return {
    "CMCD-Request": `bl=${4000 + (n % 7) * 1000},mtp=${20_000 + (n % 5) * 5000}`,
    "CMCD-Session": 'sid="soak-player"',
    ...(starved ? { "CMCD-Status": "bs" } : {}),
  };
}

/**
 * Starts the Worker (the vars of a deployment: floor pool, loopback template, 5 s isolate cache,
 * `OBSERVE_TOKEN`; its Durable Object aggregator bound and kept in `persistDir`; its inspector
 * open for the isolate's heap) and a copier that
 * puts every new `routes` value of the stand-in into the Worker's `ROUTING` namespace within
 * 100 ms, waits for the first copy, then starts the clients: one request at a time every 50 ms,
 * and `CONCURRENCY` requests at once every 250 ms, countries in turn, a player's CMCD
 * headers on a third of them.
 */
export async function startEdgeClients(
  kv: KvStandin,
  vars: {
    readonly floorPool: string;
    readonly originTemplate: string;
    readonly observeToken: string;
    readonly persistDir: string;
  },
  countries: readonly string[],
  now: () => number,
): Promise<EdgeClients> {
  const inspectorPort = await freePort();
  const worker = await startWorker(
    {
      FLOOR_POOL: vars.floorPool,
      ORIGIN_TEMPLATE: vars.originTemplate,
      // The deployed default (testkit's is 0, to read KV on every request).
      ISOLATE_CACHE_SECONDS: "5",
      OBSERVE_TOKEN: vars.observeToken,
    },
    { inspectorPort, persistDir: vars.persistDir },
  );
  const url = String(await worker.mf.ready);
  const heap = await openIsolateHeap(inspectorPort, "edge");
  let running = true;
  let copied: string | undefined;
  let copies = 0;
  const copier = (async () => {
    while (running) {
      const text = kv.values.get("routes");
      if (text !== undefined && text !== copied) {
        await worker.putMap(text, { settle: false });
        copied = text;
        copies += 1;
      }
      await sleep(100);
    }
  })();
  const deadline = Date.now() + 60_000;
  while (copies === 0) {
    if (Date.now() > deadline) {
      running = false;
      await copier;
      heap.close();
      await worker.dispose();
      throw new Error("the pusher wrote no routes to KV within 60 s");
    }
    await sleep(50);
  }
  const byStatus = new Map<number, number>();
  const bad: BadAnswer[] = [];
  let next = 0;
  const ask = async (client: BadAnswer["client"]) => {
    const n = next++;
    const country = countries[n % countries.length] as string;
    let status = 0;
    let detail = "";
    try {
      const res = await worker.dispatch(`/live/${country.toLowerCase()}/seg-${n}.ts`, {
        country,
        headers: playerHeaders(n),
      });
      status = res.status;
      const edge: string[] = [];
      res.headers.forEach((v, k) => {
        if (k.startsWith("x-edge-")) edge.push(`${k}: ${v}`);
      });
      detail = edge.join("; ");
    } catch (e) {
      detail = e instanceof Error ? e.message : String(e);
    }
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    if ((status < 200 || status > 299) && bad.length < 50)
      bad.push({ t: now(), client, country, status, detail });
  };
  const sequential = (async () => {
    while (running) {
      await ask("sequential");
      await sleep(50);
    }
  })();
  const concurrent = (async () => {
    while (running) {
      await Promise.all(Array.from({ length: CONCURRENCY }, () => ask("concurrent")));
      await sleep(250);
    }
  })();
  return {
    worker,
    url,
    heap,
    byStatus,
    bad,
    copies: () => copies,
    async stop() {
      running = false;
      await Promise.all([copier, sequential, concurrent]);
      heap.close();
      await worker.dispose();
    },
  };
}
