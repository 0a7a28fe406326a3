import type { Logger } from "pino";
import type { KvSink } from "../adapters/kv/kv-sink.js";
import { parseMap } from "../core/index.js";
import type { Clock } from "./clock.js";
import { ROUTES_KEY } from "./kv-entries.js";
import { isAfter, type KvReadVerdict, type KvView } from "./kv-view.js";
import type { PusherMetrics } from "./metrics.js";
import type { PusherStatus } from "./status.js";

/** What one anti-entropy check touches (the write scheduler's options satisfy it). */
export interface AntiEntropyDeps {
  readonly kv: KvSink;
  readonly logger: Logger;
  readonly metrics: PusherMetrics;
  readonly status: PusherStatus;
  readonly clock: Clock;
}

/** The check's outcome: the read failed, or it was judged (`KvView.judgeRead`). */
export type AntiEntropyOutcome =
  | { readonly kind: "failed"; readonly error: unknown }
  | { readonly kind: KvReadVerdict };

/**
 * Reads `routes` and compares it with the newest compile in `view`, allowing reads up to
 * `staleMs` old. Drift is counted. A `stale` read is not, but it is acted on all the same: a
 * copy that has not caught up and a former leader's late write look alike for up to `staleMs`,
 * and the late write must be repaired. Either way the view forgets what KV holds, so the next
 * tick rewrites the newest compile; that write can never move KV backwards (`routesDue` refuses
 * a map ordered before one known to be in KV, and the newest compile is never older than what
 * this pusher wrote).
 */
export async function checkKvRoutes(
  d: AntiEntropyDeps,
  view: KvView,
  staleMs: number,
): Promise<AntiEntropyOutcome> {
  const desired = view.desired?.map;
  if (!desired) return { kind: "in-sync" };
  let text: string | null;
  try {
    text = await d.kv.get(ROUTES_KEY);
  } catch (error) {
    return { kind: "failed", error };
  }
  d.status.kvOk();
  const inKv = text === null ? null : parseMap(text);
  const now = d.clock.now();
  const verdict = view.judgeRead(inKv, text !== null && !inKv, now, staleMs);
  if (verdict === "in-sync") return { kind: verdict };
  if (verdict === "stale") {
    d.logger.info(
      { kv_revision: inKv?.rev ?? null, known_revision: view.written?.rev ?? null },
      "KV routes older than what this pusher wrote: a stale copy or a late write; rewriting, not drift",
    );
  } else {
    d.metrics.driftRepairs.inc();
    d.logger.warn(
      { kv_revision: inKv?.rev ?? null, revision: desired.rev },
      "KV routes drifted from etcd; rewriting",
    );
  }
  view.learned(inKv, now);
  view.forgetMeta();
  if (inKv && isAfter(inKv, desired)) {
    d.status.recordError(
      "kv",
      new Error(`KV holds history ${inKv.history} revision ${inKv.rev}, after etcd's`),
    );
  }
  return { kind: verdict };
}
