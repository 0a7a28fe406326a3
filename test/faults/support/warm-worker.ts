import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { startWorker, type TestWorker } from "../../../testkit/worker.js";
import type { FaultContext } from "../scenario.js";
import type { RecordedKv } from "./kv-recorder.js";

/** What the Worker answered for one country at one moment. */
export interface RouteSample {
  readonly at: number;
  readonly rev: number | null;
  readonly pool: string | null;
}

/** The Worker in workerd, fed from the KV stand-in, asked for one country's route all along. */
export interface WarmWorker {
  readonly worker: TestWorker;
  readonly samples: RouteSample[];
  /** The latest answer. */
  last(): RouteSample | undefined;
  /** Stops copying the stand-in's `routes` into the Worker's namespace (a stale KV location). */
  freezeCopy(): void;
  /** Copies again (from the stand-in's next new value). */
  resumeCopy(): void;
  /** Waits until `accept(sample)`; resolves the sample, or null after `timeoutMs`. */
  waitFor(accept: (s: RouteSample) => boolean, timeoutMs: number): Promise<RouteSample | null>;
}

/**
 * Starts the Worker (`ISOLATE_CACHE_SECONDS` as given) with a copier that puts every new `routes`
 * value of the stand-in into the Worker's `ROUTING` namespace within 100 ms (KV propagation, at
 * its best), and a visitor loop asking `/__edge/route` for `country` every 200 ms, so the isolate
 * stays warm and holds its map in memory.
 */
export async function startWarmWorker(
  ctx: FaultContext,
  kv: RecordedKv,
  country: string,
  isolateSeconds: number,
): Promise<WarmWorker> {
  const token = randomBytes(16).toString("hex");
  ctx.transcript.secret("DEBUG_TOKEN", token);
  const worker = await startWorker({
    ISOLATE_CACHE_SECONDS: String(isolateSeconds),
    DEBUG_TOKEN: token,
    FLOOR_POOL: "par-1",
    ORIGIN_TEMPLATE: "https://{pool}.origin.example.com",
  });
  let running = true;
  let copying = true;
  const samples: RouteSample[] = [];
  const copier = (async () => {
    let copied: string | undefined;
    while (running) {
      const text = kv.standin.values.get("routes");
      if (copying && text !== undefined && text !== copied) {
        await worker.putMap(text);
        copied = text;
      }
      await sleep(100);
    }
  })();
  const visitor = (async () => {
    while (running) {
      try {
        const res = await worker.dispatch("/__edge/route", {
          headers: { "X-Edge-Debug-Token": token, "X-Edge-Debug-Country": country },
        });
        const body = res.json<{ rev?: number | null; route?: { pool?: string } }>();
        samples.push({ at: Date.now(), rev: body.rev ?? null, pool: body.route?.pool ?? null });
      } catch {
        samples.push({ at: Date.now(), rev: null, pool: null });
      }
      await sleep(200);
    }
  })();
  ctx.defer(async () => {
    running = false;
    await Promise.all([copier, visitor]);
    await worker.dispose();
  });
  return {
    worker,
    samples,
    last: () => samples[samples.length - 1],
    freezeCopy: () => {
      copying = false;
    },
    resumeCopy: () => {
      copying = true;
    },
    async waitFor(accept, timeoutMs) {
      const from = samples.length;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = samples.slice(from).find(accept);
        if (hit) return hit;
        if (Date.now() > deadline) return null;
        await sleep(50);
      }
    },
  };
}
