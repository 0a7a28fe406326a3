import type { Logger } from "pino";
import type { KvSink } from "../adapters/kv/kv-sink.js";
import { isAfter } from "../core/contract/map-order.js";
import { parseMap, ROUTES_KEY } from "../core/index.js";
import type { Clock } from "./clock.js";
import type { KvView } from "./kv-view.js";
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

/**
 * The check's outcome: the read failed, or it was judged (`KvView.judgeRead`). A `stale` read
 * carries when to look again: once KV's consistency window after what this pusher learned has
 * passed, a read still older than it is drift.
 */
export type AntiEntropyOutcome =
  | { readonly kind: "failed"; readonly error: unknown }
  | { readonly kind: "in-sync" | "drift" }
  | { readonly kind: "stale"; readonly recheckAt: number };

/**
 * Reads `routes` and compares it with the newest compile in `view`, allowing reads up to
 * `staleMs` old. A `stale` read (older than the map this pusher wrote or read less than `staleMs`
 * ago) is no news: nothing is written, and the caller checks again when the window has passed,
 * so each resync under eventually consistent reads costs a read, not a write. A former leader's
 * late write looks the same until then, and is repaired by that check. Drift is counted, and the
 * view forgets what KV holds, so the next tick rewrites the newest compile; that write can never
 * move KV backwards (`routesDue` refuses a map ordered before one known to be in KV, and the
 * newest compile is never older than what this pusher wrote).
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
    const recheckAt = view.writtenAt + staleMs;
    d.logger.info(
      {
        kv_revision: inKv?.rev ?? null,
        known_revision: view.written?.rev ?? null,
        recheck_in_ms: Math.max(0, recheckAt - now),
      },
      "KV routes older than what this pusher learned within KV's consistency window: a stale copy or a late write, not news; checking again after the window",
    );
    return { kind: "stale", recheckAt };
  }
  d.metrics.driftRepairs.inc();
  d.logger.warn(
    { kv_revision: inKv?.rev ?? null, revision: desired.rev },
    "KV routes drifted from etcd; rewriting",
  );
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
