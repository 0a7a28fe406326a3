import type { WaitUntil } from "../map-cache.js";
import { type AggregatorNamespace, OBSERVE_SHARDS, shardStub } from "./shards.js";
import type { TallyRow } from "./tally-row.js";

/** How long a flush may take before it is given up (its sums are then lost, nothing else). */
const FLUSH_TIMEOUT_MS = 5000;

/** The aggregator's address for a flush; the host is never resolved (a stub's fetch). */
export const AGGREGATOR_ADD_URL = "https://observations.internal/add";

/**
 * Sends `rows` to one aggregator shard, picked at random, after the response: the request's
 * `waitUntil` keeps the isolate for it. An aggregator that is down, slow or failing costs these
 * sums and nothing else; no error reaches a viewer.
 */
export function flushRows(
  ns: AggregatorNamespace,
  rows: readonly TallyRow[],
  ctx: WaitUntil | undefined,
): void {
  const send = async () => {
    try {
      const stub = shardStub(ns, Math.floor(Math.random() * OBSERVE_SHARDS));
      const res = await stub.fetch(AGGREGATOR_ADD_URL, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ rows }),
        signal: AbortSignal.timeout(FLUSH_TIMEOUT_MS),
      });
      await res.body?.cancel();
    } catch {
      // Lost sums are the whole cost of an aggregator that is down; the viewer saw nothing.
    }
  };
  const pending = send();
  ctx?.waitUntil(pending);
}
