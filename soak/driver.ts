import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { seededRandom } from "../testkit/kv-standin.js";
import { runOwned } from "../testkit/owned-process.js";
import { ROOT } from "../testkit/pusher-process.js";
import { COUNTRIES } from "../testkit/sample-countries.js";
import type { SoakClock } from "./clock.js";
import { FLOOR_POOL, POOLS } from "./layout.js";
import type { World } from "./world.js";

/** The change driver's counts. */
export interface Driver {
  /** Country rules written. */
  changes(): number;
  /** Writes etcd refused or did not answer (a member or the leader down): retried by the next. */
  failed(): number;
  /** Ticks skipped because `MAX_IN_FLIGHT` writes were still waiting for etcd. */
  skipped(): number;
  boosts(): number;
  boostFailures(): readonly string[];
  /** Temporary pools defined and deleted again. */
  tempPools(): number;
  /**
   * Holds the rule writes (the oracle's check); they are made up after `resume`, at twice the
   * rate. Boosts and pools keep their schedule.
   */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

/** Writes per second of the driver. */
export const CHANGES_PER_SECOND = 10;
/** Every this many seconds a boost (`edgectl boost`) with a 20 s TTL. */
export const BOOST_EVERY_SECONDS = 10;
export const BOOST_TTL = "20s";
/** Rule writes waiting for etcd at most (a slow etcd lowers the rate rather than piling up). */
export const MAX_IN_FLIGHT = 32;

/**
 * Starts the driver: 10 country rules a second (random primary, another pool, then the floor pool; up to
 * `MAX_IN_FLIGHT` writes at once);
 * every 10 s an `edgectl boost` of a country for 20 s; and every 10 s a pool `tmp-N` defined at
 * second 2 of the 10 and deleted at second 6, so that a pusher keeping a removed pool's metric
 * series grows by one pool every 10 s, and no temporary pool is defined when the sampler scrapes
 * (second 0).
 */
export function startDriver(world: World, clock: SoakClock, seed: number): Driver {
  const random = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  let running = true;
  let paused = false;
  let changes = 0;
  let failed = 0;
  let skipped = 0;
  let boosts = 0;
  let tempPools = 0;
  const boostFailures: string[] = [];
  const { client, prefix } = world;

  const inFlight = new Set<Promise<void>>();
  const writeRule = () => {
    const cc = pick(COUNTRIES);
    const primary = pick(POOLS);
    // A valid rule: no pool twice (the floor pool last, unless it is the primary).
    const others = POOLS.filter((p) => p !== primary && p !== FLOOR_POOL);
    const fallbacks = [pick(others), ...(primary === FLOOR_POOL ? [] : [FLOOR_POOL])];
    const write: Promise<void> = client
      .put(`${prefix}country/${cc}`)
      .value(JSON.stringify({ primary, fallbacks }))
      .exec()
      .then(
        () => {
          changes += 1;
        },
        () => {
          failed += 1;
        },
      )
      .finally(() => inFlight.delete(write));
    inFlight.add(write);
  };
  const rules = (async () => {
    const interval = 1000 / CHANGES_PER_SECOND;
    let due = Date.now();
    // Writes held while paused are made up afterwards, one extra a tick: 10 a second on average.
    let owed = 0;
    while (running) {
      due += interval;
      if (paused) owed += 1;
      else {
        for (let n = owed > 0 ? 2 : 1; n > 0; n--) {
          if (inFlight.size >= MAX_IN_FLIGHT) {
            skipped += 1;
            continue;
          }
          writeRule();
          if (n === 2) owed -= 1;
        }
      }
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      else due = Date.now();
    }
    await Promise.all(inFlight);
  })();

  const boostLoop = (async () => {
    let n = 0;
    while (running) {
      await clock.untilPhase(BOOST_EVERY_SECONDS, 1, () => running);
      if (!running) break;
      const cc = COUNTRIES[n++ % COUNTRIES.length] as string;
      const r = await runOwned(
        `edgectl boost ${cc}`,
        process.execPath,
        [
          join(ROOT, "bin/edgectl.js"),
          "boost",
          cc,
          ...["--pool", pick(POOLS), "--ttl", BOOST_TTL, "--reason", "soak"],
        ],
        {
          env: {
            PATH: process.env.PATH ?? "",
            HOME: process.env.HOME ?? "/tmp",
            ...world.edgectlEnv,
          },
          cwd: ROOT,
          timeoutMs: 15_000,
        },
      );
      if (r.code === 0) boosts += 1;
      else if (boostFailures.length < 20)
        boostFailures.push(`t=${clock.now().toFixed(0)} s exit ${r.code}: ${r.output.slice(-300)}`);
    }
  })();

  const poolLoop = (async () => {
    let n = 0;
    while (running) {
      await clock.untilPhase(10, 2, () => running);
      if (!running) break;
      const key = `${prefix}pool/tmp-${++n}`;
      const origin = world.originOf.get(FLOOR_POOL) as string;
      try {
        await client.put(key).value(JSON.stringify({ origin })).exec();
        await clock.untilPhase(10, 6, () => running);
        await client.delete().key(key).exec();
        tempPools += 1;
      } catch {
        // etcd unavailable: deleted on the next try below
        await client
          .delete()
          .key(key)
          .exec()
          .catch(() => undefined);
      }
    }
  })();

  return {
    changes: () => changes,
    failed: () => failed,
    skipped: () => skipped,
    boosts: () => boosts,
    boostFailures: () => boostFailures,
    tempPools: () => tempPools,
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
    },
    async stop() {
      running = false;
      await Promise.all([rules, boostLoop, poolLoop]);
    },
  };
}
