import { setTimeout as sleep } from "node:timers/promises";
import { isCountryCode, isPoolName } from "../core/index.js";
import type { CanaryJudge } from "./canary-judge.js";
import type { EdgeReader } from "./edge-reader.js";
import { KEPT_MINUTES, MinuteLedger } from "./minute-ledger.js";
import { type MinuteReading, minuteReading } from "./minute-reading.js";
import { ObserveFailure } from "./observe-failure.js";
import type { ObservedKeys, PairObservation } from "./observed-keys.js";
import { observedOf } from "./observed-value.js";
import { observedWindow } from "./observed-window.js";
import type { ObserverMetrics } from "./observer-metrics.js";
import type { ObserverStateFile } from "./observer-state-file.js";
import type { ObserverReason, ObserverStatus } from "./observer-status.js";

/** One state change of the observer, logged as one line. */
export interface ObserveEvent {
  readonly event:
    | "started"
    | "state-ignored"
    | "poll-failing"
    | "poll-recovered"
    | "edge-reset"
    | "registered"
    | "observed-written"
    | "observed-removed"
    | "released"
    | "lease-lost"
    | "etcd-failing"
    | "etcd-recovered"
    | "canary-judged"
    | "canary-standby"
    | "canary-rolled-back"
    | "canary-promoted"
    | "canary-end-failed"
    | "canary-judge-failing"
    | "stopped";
  /** The edge's origin; never the token. */
  readonly edge: string;
  readonly reason?: ObserverReason;
  readonly country?: string;
  readonly pool?: string;
  readonly p90_ms?: number;
  readonly samples?: number;
  readonly error_ratio?: number;
  readonly lease?: string;
  /** The canary judged or ended (`canary-*` events). */
  readonly canary?: string;
  readonly detail?: string;
  readonly err?: unknown;
}

/** What the observer needs; the clock is injectable for tests. */
export interface ObserverDeps {
  /** The edge's origin, for the log. */
  readonly edge: string;
  readonly read: EdgeReader;
  readonly keys: ObservedKeys;
  readonly minSamples: number;
  readonly intervalMs: number;
  /** After this long without a successful poll, the observations are let go. */
  readonly staleMs: number;
  readonly status: ObserverStatus;
  readonly metrics?: ObserverMetrics;
  readonly stateFile?: ObserverStateFile;
  /** Judges the running canary on each poll (docs/reference.md §13). */
  readonly canary?: CanaryJudge;
  readonly log: (e: ObserveEvent) => void;
  readonly signal: AbortSignal;
  readonly now?: () => number;
  /** Called after each poll's work (reading, counting, writing, judging), before its sleep. */
  readonly pollDone?: () => void;
}

/**
 * The window whose figures the `observed/` keys carry: the current minute and the one before,
 * what the edge's own `window=60` sums.
 */
export const OBSERVED_WINDOW_MINUTES = 2;

/**
 * Polls the edge every interval until the signal aborts (docs/reference.md §12): reads its
 * one-minute rows (`by=minute`) of the current and previous minutes, and of every minute since
 * the last good poll (up to the edge's 15 before the current one), in one request; adds what
 * each minute gained to the counters, and writes `observed/{CC}/{pool}` for the pairs with at
 * least `minSamples` requests in the last two minutes. A pair the edge no longer keeps (no
 * requests in its 16 minutes) leaves `/metrics` and the state file. A failed poll (the edge
 * unreachable, a refused token, a junk answer) writes nothing: it is a reason on `/status`, a
 * count on `/metrics` and one log line; once polls have failed for `staleMs`, the lease is no
 * longer renewed, so the observations go and routing is the checkers' alone. On abort the lease
 * is revoked. With `canary`, each poll also judges the running canary (and a failed poll judges
 * nothing, so the judgement ages).
 */
export async function runObserver(deps: ObserverDeps): Promise<void> {
  const now = deps.now ?? Date.now;
  const { status, metrics, keys } = deps;
  const emit = (e: Omit<ObserveEvent, "edge">) => deps.log({ edge: deps.edge, ...e });
  let ledger = new MinuteLedger();
  let baseline = true;
  if (deps.stateFile) {
    const { state, problem } = await deps.stateFile.load();
    if (state) {
      ledger = MinuteLedger.fromJSON(state.ledger);
      metrics?.restore(state.totals);
      baseline = false;
    } else if (problem) {
      emit({
        event: "state-ignored",
        detail: `${deps.stateFile.path}: ${problem}; starting afresh`,
      });
    }
  }
  emit({ event: "started" });
  const startedAt = now();
  let etcdFailing = false;
  let canaryFailing = false;

  const poll = async (): Promise<MinuteReading> => {
    const minuteNow = Math.floor(now() / 60_000);
    const last = ledger.lastMinute;
    // a window of 60·k s covers the current minute and the k before it (the edge rounds out)
    const k = last === null ? 1 : Math.min(KEPT_MINUTES, Math.max(1, minuteNow - last));
    return minuteReading(await deps.read(60 * k));
  };

  const failed = (f: ObserveFailure) => {
    metrics?.pollFailed(f.code);
    status.failures++;
    const changed = status.reason !== f.code;
    status.reason = f.code;
    status.detail = f.message;
    if (changed) emit({ event: "poll-failing", reason: f.code, detail: f.message });
    const since = status.lastSuccess ?? startedAt;
    if (!status.released && now() - since >= deps.staleMs) {
      keys.release();
      status.released = true;
      status.registered = false;
      status.keys = 0;
      metrics?.lease(false, 0);
      emit({
        event: "released",
        detail: `no good poll for ${Math.round((now() - since) / 1000)} s: the observations go with the lease`,
      });
    }
  };

  const succeeded = async (reading: MinuteReading) => {
    const take = ledger.take(reading, baseline);
    baseline = false;
    for (const inc of take.increments) metrics?.add(inc);
    const forgotten = metrics?.retain(ledger.pairs()) ?? 0;
    if (take.resets > 0) {
      metrics?.edgeReset(take.resets);
      emit({
        event: "edge-reset",
        detail: `${take.resets} pair(s) hold fewer requests than counted: the edge's aggregator lost its sums`,
      });
    }
    metrics?.polled();
    if (status.reason !== null && status.reason !== "etcd-failing" && status.reason !== "starting")
      emit({ event: "poll-recovered", detail: `after ${status.failures} failed poll(s)` });
    status.reason = etcdFailing ? "etcd-failing" : null;
    if (!etcdFailing) status.detail = null;
    status.failures = 0;
    status.lastSuccess = now();
    status.released = false;
    if (deps.stateFile && (take.increments.length > 0 || forgotten > 0))
      await deps.stateFile
        .save({ v: 2, ledger: ledger.toJSON(), totals: metrics?.totalsJson() ?? emptyTotals })
        .catch((e) =>
          emit({ event: "state-ignored", detail: "cannot write the state file", err: e }),
        );

    const wanted = new Map<string, PairObservation>();
    for (const [key, row] of observedWindow(reading, OBSERVED_WINDOW_MINUTES)) {
      if (row.requests < deps.minSamples) continue;
      if (!isCountryCode(row.country) || !isPoolName(row.pool)) continue;
      wanted.set(key, {
        country: row.country,
        pool: row.pool,
        value: observedOf(row),
      });
    }
    try {
      await keys.sync(wanted);
      if (etcdFailing) emit({ event: "etcd-recovered" });
      etcdFailing = false;
      if (status.reason === "etcd-failing") {
        status.reason = null;
        status.detail = null;
      }
    } catch (e) {
      if (!etcdFailing) emit({ event: "etcd-failing", reason: "etcd-failing", err: e });
      etcdFailing = true;
      status.reason = "etcd-failing";
      status.detail = e instanceof Error ? e.message : String(e);
    }
    status.registered = keys.leaseHex !== null;
    status.keys = keys.count;
    metrics?.lease(status.registered, keys.count);
  };

  while (!deps.signal.aborted) {
    const tickAt = now();
    let reading: MinuteReading | null = null;
    try {
      reading = await poll();
    } catch (e) {
      if (!(e instanceof ObserveFailure)) throw e;
      failed(e);
    }
    if (reading) await succeeded(reading);
    if (deps.canary) {
      try {
        await deps.canary.tick(reading);
        canaryFailing = false;
      } catch (e) {
        if (!canaryFailing)
          emit({
            event: "canary-judge-failing",
            detail: "reading or writing canary/ keys failed; the canary is not judged",
            err: e,
          });
        canaryFailing = true;
      }
    }
    deps.pollDone?.();
    try {
      await sleep(Math.max(0, tickAt + deps.intervalMs - now()), undefined, {
        signal: deps.signal,
      });
    } catch {
      break;
    }
  }
  await keys.revoke().catch(() => undefined);
  await deps.canary?.revoke();
  emit({ event: "stopped", detail: "lease revoked" });
}

const emptyTotals = { requests: [], starved: [], failovers: [], ttfb: [] };
