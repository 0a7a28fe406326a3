/** `EDGE_EJECT_AFTER` and `EDGE_EJECT_SECONDS`, parsed (docs/reference.md §4). */
export interface EjectionSettings {
  /** Timeouts or refusals in a row that eject an origin; 0 never ejects. */
  readonly ejectAfter: number;
  /** How long an ejected origin is skipped before one request tries it again. */
  readonly ejectMs: number;
}

/** What a request may do with an origin: send to it, or pass it over. */
export type Admission = "use" | "skip";

interface OriginRecord {
  /** Timeouts or refusals in a row. */
  failures: number;
  /** Skipped until this time (ms); 0 while not ejected. */
  until: number;
}

/** Origins remembered at most; only a runaway map names more. */
const MAX_ORIGINS = 1024;

/**
 * Outlier ejection within one isolate (docs/reference.md §4, "Outlier ejection"): an origin that
 * timed out or refused `ejectAfter` requests in a row is skipped for `ejectMs`; then a single
 * request is let through to probe it (its own admission re-ejects the origin for everyone else
 * while it runs, so a probe that never reports back costs one more period, not the origin). A
 * probe that gets any response restores the origin; one that fails ejects it again.
 */
export class OutlierEjection {
  private readonly origins = new Map<string, OriginRecord>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Whether a request may try `origin` now; a `use` after an ejection is that period's probe. */
  admit(origin: string, s: EjectionSettings): Admission {
    const r = this.origins.get(origin);
    if (!r || r.until === 0 || s.ejectAfter === 0) return "use";
    const t = this.now();
    if (t < r.until) return "skip";
    r.until = t + s.ejectMs;
    return "use";
  }

  /** Records how an attempt at `origin` ended: `failed` for a timeout or a refusal. */
  record(origin: string, failed: boolean, s: EjectionSettings): void {
    if (!failed) {
      this.origins.delete(origin);
      return;
    }
    if (s.ejectAfter === 0) return;
    let r = this.origins.get(origin);
    if (!r) {
      if (this.origins.size >= MAX_ORIGINS) this.origins.clear();
      r = { failures: 0, until: 0 };
      this.origins.set(origin, r);
    }
    r.failures += 1;
    if (r.failures >= s.ejectAfter) r.until = this.now() + s.ejectMs;
  }
}
