import { OBSERVER_SETTLING_SECONDS } from "./layout.js";
import { RESOLVED_SPAN_SECONDS } from "./no-growth.js";
import type { PlantedLeak } from "./options.js";

/** One step of the chaos schedule, at `t` seconds into the measured run. */
export interface ChaosStep {
  readonly t: number;
  readonly kind:
    | "kill-heartbeat"
    | "kill-leader-pusher"
    | "kill-etcd-member"
    | "restart-etcd-member"
    | "kill-observer"
    | "plant-lease"
    | "plant-observed";
}

/** Seconds an etcd member stays down. */
export const ETCD_DOWN_SECONDS = 15;

/**
 * The schedule of a run of `seconds`: a heartbeat killed (and restarted) every minute; the
 * leader pusher every 5 minutes (restarted as standby); one etcd member once, at 40 % of the
 * run (a quarter in a short run), for 15 s; `edgectl observe` every 5 minutes of the first half
 * (once, at a fifth, in a short run), the last early enough that its successor's settled memory
 * ({@link OBSERVER_SETTLING_SECONDS}) spans {@link RESOLVED_SPAN_SECONDS} of the run; with
 * `plant`, that leak: one lease kept every minute, or `observed/` keys left every 30 s. Steps
 * sit off the minute (3, 7, 17, 33, 37, 44 s past it) so they do not meet the sampler (second 0
 * of every 10). A run shorter than 10 minutes kills the leader pusher once at a third of the
 * run, in the warm-up half, so the judged half sees the pushers it fits.
 */
export function chaosSchedule(seconds: number, plant: PlantedLeak | null): ChaosStep[] {
  const steps: ChaosStep[] = [];
  for (let t = 63; t < seconds - 30; t += 60) steps.push({ t, kind: "kill-heartbeat" });
  if (seconds < 600) {
    steps.push({ t: Math.round(seconds / 3 / 10) * 10 + 3, kind: "kill-leader-pusher" });
  } else {
    for (let t = 333; t < seconds - 60; t += 300) steps.push({ t, kind: "kill-leader-pusher" });
  }
  const etcdAt =
    seconds < 600
      ? Math.round(seconds / 4 / 10) * 10 + 4
      : Math.round((seconds * 0.4) / 60) * 60 + 44;
  steps.push({ t: etcdAt, kind: "kill-etcd-member" });
  steps.push({ t: etcdAt + ETCD_DOWN_SECONDS, kind: "restart-etcd-member" });
  if (seconds < 600) {
    steps.push({ t: Math.round(seconds / 5 / 10) * 10 + 7, kind: "kill-observer" });
  } else {
    const lastRestart = Math.max(127, seconds - OBSERVER_SETTLING_SECONDS - RESOLVED_SPAN_SECONDS);
    for (let t = 127; t < seconds / 2 - 60 && t <= lastRestart; t += 300)
      steps.push({ t, kind: "kill-observer" });
  }
  if (plant === "lease")
    for (let t = 37; t < seconds; t += 60) steps.push({ t, kind: "plant-lease" });
  if (plant === "observed")
    for (let t = 17; t < seconds; t += 30) steps.push({ t, kind: "plant-observed" });
  return steps.sort((a, b) => a.t - b.t);
}
