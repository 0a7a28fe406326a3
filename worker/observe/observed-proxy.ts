import type { WaitUntil } from "../map-cache.js";
import { flushRows } from "./flush.js";
import { type ObserveVars, observeSettings } from "./observe-settings.js";
import { playerReport } from "./player-report.js";
import type { ViewerRecorder } from "./recorder.js";
import type { AggregatorBinding, AggregatorNamespace } from "./shards.js";
import { thrownOutcome, type ViewerOutcome, viewerOutcome } from "./viewer-outcome.js";

/** What `observedProxy` reads of the Worker's env. */
export type ObserveEnv = ObserveVars & AggregatorBinding;

function record(
  recorder: ViewerRecorder,
  env: ObserveEnv,
  ns: AggregatorNamespace,
  request: Request,
  got: ViewerOutcome,
  ttfbMs: number | null,
  ctx: WaitUntil | undefined,
): void {
  try {
    const report = playerReport(request);
    const now = Date.now();
    recorder.record(now, got.country, got.pool, got.side, {
      outcome: got.outcome,
      cache: got.cache,
      failover: got.failover,
      ttfbMs,
      starved: report.starved,
      throughputKbps: report.throughputKbps,
    });
    const rows = recorder.takeIfDue(now, observeSettings(env).flushMs);
    if (rows) flushRows(ns, rows, ctx);
  } catch {
    // Recording never fails a request.
  }
}

/**
 * Runs `proxy` (the edge's whole handling of a viewer's request) and records what the request
 * got into the isolate's `recorder`: country, pool, outcome, failover, and the time from the
 * request's arrival to the origin's response headers, or to the edge's 504 when none came in
 * time (failover included; `Date.now` in workerd
 * moves only across I/O, so this is the wait, not the edge's CPU). Sums go to the aggregator
 * after the response (`waitUntil`). Off with `OBSERVE="off"` or without the `OBSERVATIONS` binding.
 */
export async function observedProxy(
  request: Request,
  env: ObserveEnv,
  ctx: WaitUntil | undefined,
  recorder: ViewerRecorder,
  proxy: () => Promise<Response>,
): Promise<Response> {
  const ns = env.OBSERVATIONS;
  if (ns === undefined || !observeSettings(env).on) return proxy();
  const started = Date.now();
  let response: Response;
  try {
    response = await proxy();
  } catch (err) {
    record(recorder, env, ns, request, thrownOutcome(request), null, ctx);
    throw err;
  }
  const ttfbMs = Date.now() - started;
  let got: ViewerOutcome | null = null;
  try {
    got = viewerOutcome(request, response);
  } catch {
    // Recording never fails a request.
  }
  if (got) record(recorder, env, ns, request, got, got.waitIsTtfb ? ttfbMs : null, ctx);
  return response;
}
