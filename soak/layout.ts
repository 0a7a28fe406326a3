/** 20 pools; the last three have three checkers each, the others one heartbeat. */
export const POOLS = Array.from({ length: 20 }, (_, i) => `p${String(i + 1).padStart(2, "0")}`);
export const CHECKED_POOLS = ["p18", "p19", "p20"] as const;
export const CHECKERS = ["a", "b", "c"] as const;
export const FLOOR_POOL = "p01";
/** Heartbeat lease TTL (s): a killed heartbeat's key and lease are gone this long after. */
export const HEARTBEAT_TTL = 10;
/**
 * Seconds between a heartbeat's checks: five times the unit's rate, so a leak per check shows
 * five times faster per hour, and a heartbeat's own settling (below) ends inside a 30-minute run.
 */
export const HEARTBEAT_INTERVAL = 1;
/**
 * Checks after which a heartbeat's memory has settled (soak/README.md, "A heartbeat's memory
 * settles"): V8 compiles its loop with Maglev at ~500 checks, a one-off native step of 2–6 MiB,
 * and its live heap rises by ~1 MiB over its first ~700 checks, then holds.
 */
export const HEARTBEAT_SETTLING_CHECKS = 900;
/** Seconds between the sampler's samples. */
export const SAMPLE_EVERY_SECONDS = 10;
/** Pusher election TTL (s). */
export const ELECTION_TTL = 5;
/** `edgectl observe --interval` (s): five times the unit's rate, as the heartbeats'. */
export const OBSERVER_INTERVAL = 2;
/** `edgectl observe --min-samples`: low enough that the soak's churning routes keep keys. */
export const OBSERVER_MIN_SAMPLES = 10;
/** `edgectl observe --ttl` (s): a killed observer's `observed/` keys are gone this long after. */
export const OBSERVER_TTL = 15;
/**
 * One-minute buckets the Worker's aggregator keeps (docs/reference.md §12: the current minute and
 * the 15 before it): its rows, and so its storage, rise for this long, then hold.
 */
export const AGGREGATOR_KEPT_MINUTES = 16;
/**
 * Seconds after which the observer's memory has settled: it holds the (country, pool) pairs of
 * the edge's kept minutes and their totals, so its heap rises while those minutes fill, then
 * holds (soak/README.md).
 */
export const OBSERVER_SETTLING_SECONDS = (AGGREGATOR_KEPT_MINUTES + 1) * 60;
/** By kind of process, the age (s) before which its memory still settles (no-growth.ts). */
export const SETTLING_SECONDS = Object.freeze({
  heartbeat: HEARTBEAT_SETTLING_CHECKS * HEARTBEAT_INTERVAL,
  observer: OBSERVER_SETTLING_SECONDS,
});
