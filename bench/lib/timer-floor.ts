import { setTimeout as sleep } from "node:timers/promises";
import { LatencyWindow } from "../../heartbeat/latency-window.js";
import { needsRewrite } from "../../heartbeat/published-health.js";
import { round } from "./stats.js";

/**
 * What the host's scheduling alone does to a steady latency: a timer of `delayMs` armed every
 * `intervalMs` in this process for `seconds`, each sample its real elapsed time, fed through the
 * checker's own window and rewrite rule. A perfectly steady origin measured by a perfect probe
 * on this host would see these p90s; `rewrites` is what they would cost a checker.
 */
export interface TimerFloor {
  readonly samples: number;
  /** p90 of the timers' lateness over the whole run (ms). */
  readonly lateness_p90_ms: number;
  /** Rewrites the checker's rule would make of these timers' p90 after the first write. */
  readonly rewrites: number;
}

/** Samples the timer floor until `signal` aborts (run it beside the measurement). */
export async function timerFloor(
  delayMs: number,
  intervalMs: number,
  signal: AbortSignal,
): Promise<TimerFloor> {
  const window = new LatencyWindow();
  const lateness: number[] = [];
  let written: number | null = null;
  let rewrites = 0;
  while (!signal.aborted) {
    const t0 = performance.now();
    await sleep(delayMs);
    const took = performance.now() - t0;
    lateness.push(took - delayMs);
    window.add(took);
    const p90 = window.published();
    if (p90 !== null) {
      if (written === null) written = p90;
      else if (
        needsRewrite({ status: "healthy", p90Ms: written }, { status: "healthy", p90Ms: p90 })
      ) {
        rewrites += 1;
        written = p90;
      }
    }
    await sleep(Math.max(0, intervalMs - delayMs));
  }
  const sorted = [...lateness].sort((a, b) => a - b);
  const p90 = sorted[Math.max(0, Math.ceil(0.9 * sorted.length) - 1)] ?? 0;
  return { samples: lateness.length, lateness_p90_ms: round(p90, 1), rewrites };
}
