import { setTimeout as sleep } from "node:timers/promises";

/** The run's clock: seconds since the measured run started, and waits for a phase of a period. */
export interface SoakClock {
  readonly startedAt: number;
  /** Seconds since start. */
  now(): number;
  /**
   * Waits until the next moment when `now() mod period = offset` (seconds), checking `alive`
   * at least twice a second; returns early once it is false.
   */
  untilPhase(period: number, offset: number, alive: () => boolean): Promise<void>;
  /** Waits until `now() >= t`, returning early once `alive` is false. */
  until(t: number, alive: () => boolean): Promise<void>;
}

/** A clock started now. */
export function startClock(): SoakClock {
  const startedAt = Date.now();
  const now = () => (Date.now() - startedAt) / 1000;
  const until = async (t: number, alive: () => boolean) => {
    while (alive()) {
      const left = t - now();
      if (left <= 0) return;
      await sleep(Math.min(500, left * 1000));
    }
  };
  return {
    startedAt,
    now,
    until,
    async untilPhase(period, offset, alive) {
      const t = now();
      let next = Math.floor(t / period) * period + offset;
      if (next <= t) next += period;
      await until(next, alive);
    },
  };
}
