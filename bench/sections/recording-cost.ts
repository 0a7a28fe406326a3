import { fileURLToPath } from "node:url";
import { newMiniflare } from "../../testkit/miniflare.js";
import { bundleForWorkerd, compatibilityDate } from "../../testkit/worker.js";
import type { Cleanup } from "../lib/cleanup.js";
import { childPids, commName } from "../lib/proc.js";
import { medianWithCi } from "../lib/stats.js";
import { processRunSeconds } from "../lib/thread-cpu.js";

const LOOP_ENTRY = fileURLToPath(new URL("../workers/recording-loop.ts", import.meta.url));

/** Recording's own CPU per request, from the loop Worker (bench/workers/recording-loop.ts). */
export interface RecordingCost {
  /** workerd CPU per recorded request, on − off, paired rounds: median and its 95 % interval. */
  readonly p50: number;
  readonly ci95: readonly [number, number];
  /** workerd CPU per loop iteration with recording off (the loop's own floor), µs. */
  readonly off_us: number;
  readonly rounds: number;
  readonly iterations: number;
}

export interface RecordingCostOptions {
  /** Pairs of rounds (one on, one off, their order alternating). */
  readonly rounds: number;
  /** Requests recorded per round. */
  readonly iterations: number;
  readonly cleanup: Cleanup;
}

/**
 * The recording path's CPU in real workerd, set clear of a request's own: the loop Worker runs
 * the deployed `observedProxy` `iterations` times per request, with recording on, then off
 * (`OBSERVE="off"`), in alternating order; workerd's CPU (every thread, ns resolution) over each
 * round, divided by its iterations, differenced per pair. A whole request costs workerd ~700 µs
 * here, so a paired difference of whole requests cannot resolve a few µs; this can.
 */
export async function recordingCost(o: RecordingCostOptions): Promise<RecordingCost> {
  const [script, date] = await Promise.all([bundleForWorkerd(LOOP_ENTRY), compatibilityDate()]);
  const before = new Set(childPids(process.pid));
  const mf = newMiniflare({
    modules: true,
    script,
    compatibilityDate: date,
    cf: false,
    bindings: { OBSERVE_FLUSH_SECONDS: "10" },
    durableObjects: { OBSERVATIONS: { className: "ObservationAggregator", useSQLite: true } },
  });
  o.cleanup.add("recording-loop workerd", () => mf.dispose());
  await mf.ready;
  const pids = childPids(process.pid).filter(
    (p) => !before.has(p) && commName(p).startsWith("workerd"),
  );
  const cpu = () => pids.reduce((s, p) => s + processRunSeconds(p), 0);
  const round = async (mode: "on" | "off"): Promise<number> => {
    const start = cpu();
    const res = await mf.dispatchFetch(`http://loop.bench/?n=${o.iterations}&mode=${mode}`);
    const mean = Number(await res.text());
    if (res.status !== 200 || mean !== 200)
      throw new Error(`recording loop answered ${res.status}`);
    return ((cpu() - start) * 1e6) / o.iterations;
  };
  // Warm-up: the JIT and the isolate's first flush.
  await round("on");
  await round("off");
  const diffs: number[] = [];
  const offs: number[] = [];
  for (let i = 0; i < o.rounds; i++) {
    const first = i % 2 === 0 ? "on" : "off";
    const a = await round(first);
    const b = await round(first === "on" ? "off" : "on");
    const [on, off] = first === "on" ? [a, b] : [b, a];
    diffs.push(on - off);
    offs.push(off);
  }
  const m = medianWithCi(diffs);
  return {
    p50: m.p50,
    ci95: m.ci95,
    off_us: medianWithCi(offs).p50,
    rounds: o.rounds,
    iterations: o.iterations,
  };
}
