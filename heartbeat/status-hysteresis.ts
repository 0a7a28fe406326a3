import type { HealthStatus } from "../core/index.js";

/** Check results needed to flip the status (docs/reference.md §6: 3 failures down, 2 successes up). */
export const FAILURES_TO_UNHEALTHY = 3;
export const SUCCESSES_TO_HEALTHY = 2;

/** Turns a stream of check results into a status that does not flap on one bad probe. */
export class StatusHysteresis {
  private failures = 0;
  private successes = 0;

  constructor(private current: "healthy" | "unhealthy") {}

  get status(): HealthStatus {
    return this.current;
  }

  /** Records one check result and returns the (possibly new) status. */
  record(ok: boolean): HealthStatus {
    if (ok) {
      this.failures = 0;
      this.successes++;
      if (this.current === "unhealthy" && this.successes >= SUCCESSES_TO_HEALTHY)
        this.current = "healthy";
    } else {
      this.successes = 0;
      this.failures++;
      if (this.current === "healthy" && this.failures >= FAILURES_TO_UNHEALTHY)
        this.current = "unhealthy";
    }
    return this.current;
  }
}
