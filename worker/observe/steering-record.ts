import { OUTCOMES } from "../../core/contract/observations.js";
import type { WaitUntil } from "../map-cache.js";
import { flushRows } from "./flush.js";
import { observeSettings } from "./observe-settings.js";
import type { ObserveEnv } from "./observed-proxy.js";
import { playerReport } from "./player-report.js";
import type { ViewerRecorder } from "./recorder.js";

const OK = OUTCOMES.indexOf("ok");

/**
 * Records a player's steering request (docs/reference.md §15) as one `ok` request of `country`
 * on `pathway`, the pool of its chain the player says it is on, with the throughput it reported (`_HLS_throughput`, `_DASH_throughput`). No time to first
 * byte: no origin was asked. Never throws.
 */
export function recordSteering(
  recorder: ViewerRecorder,
  env: ObserveEnv,
  request: Request,
  country: string,
  pathway: string,
  ctx: WaitUntil | undefined,
): void {
  const ns = env.OBSERVATIONS;
  if (ns === undefined || !observeSettings(env).on) return;
  try {
    const report = playerReport(request);
    const now = Date.now();
    recorder.record(now, country, pathway, "", {
      outcome: OK,
      failover: false,
      ttfbMs: null,
      starved: report.starved,
      throughputKbps: report.throughputKbps,
    });
    const rows = recorder.takeIfDue(now, observeSettings(env).flushMs);
    if (rows) flushRows(ns, rows, ctx);
  } catch {
    // Recording never fails a request.
  }
}
