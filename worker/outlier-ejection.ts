/** `EDGE_EJECT_AFTER` and `EDGE_EJECT_SECONDS`, parsed (docs/reference.md §4). */
export interface EjectionSettings {
  /** Origin faults in a row that eject an origin; 0 never passes an origin over. */
  readonly ejectAfter: number;
  /** How long a first ejection lasts; each ejection in a row lasts this much longer. */
  readonly ejectMs: number;
}

/**
 * What a request may do with an origin: send to it; pass it over; or pass it over and probe it
 * out of band (the caller sends the probe and reports it with `record` or `release`).
 */
export type Admission = "use" | "skip" | "probe";

interface OriginRecord {
  /** Origin faults in a row: the viewers' attempts' and the probes'. */
  failures: number;
  /** Passed over as ejected until this time (ms); 0 while not ejected. */
  until: number;
  /** Ejections in a row: the next one lasts `ejectMs` times this many. */
  ejections: number;
  /** A probe is out until this time (ms); 0 while none is. */
  probeUntil: number;
}

/** Origins remembered at most; only a runaway map names more. */
const MAX_ORIGINS = 1024;

/** The longest an ejection grows to (Envoy's `max_ejection_time` default), unless `ejectMs` is longer. */
export const MAX_EJECT_MS = 300_000;

/**
 * Outlier ejection within one isolate (docs/reference.md §4, "Outlier ejection"). An origin
 * fault (a timeout, nothing listening, or silence past `ORIGIN_HEDGE_MS` while another pool was
 * asked) makes the origin suspect: every request passes it over while one probe, sent out of
 * band, finds out whether it answers. `ejectAfter` faults in a row eject it: it is passed over
 * for `ejectMs` × the ejections in a row (capped at {@link MAX_EJECT_MS}), then probed out of band
 * again. Any response, a viewer's or a probe's, restores it and forgets its history. A probe
 * that never reports back costs one more `ejectMs`, not the origin.
 */
export class OutlierEjection {
  private readonly origins = new Map<string, OriginRecord>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Whether a request may send to `origin` now; `probe` once per suspect or expired period. */
  admit(origin: string, s: EjectionSettings): Admission {
    const r = this.origins.get(origin);
    if (!r || s.ejectAfter === 0) return "use";
    const t = this.now();
    if (t < r.until || t < r.probeUntil) return "skip";
    r.probeUntil = t + s.ejectMs;
    return "probe";
  }

  /**
   * Whether `origin` is ejected now (passed over for its ejection period), without admitting a
   * probe: what steering reads to leave a pool out of a player's pathways (docs/reference.md §15).
   */
  isEjected(origin: string, s: EjectionSettings): boolean {
    const r = this.origins.get(origin);
    return r !== undefined && s.ejectAfter !== 0 && this.now() < r.until;
  }

  /** Records how an attempt or probe at `origin` ended: `failed` for an origin fault. */
  record(origin: string, failed: boolean, s: EjectionSettings): void {
    if (!failed) {
      this.origins.delete(origin);
      return;
    }
    if (s.ejectAfter === 0) return;
    let r = this.origins.get(origin);
    if (!r) {
      if (this.origins.size >= MAX_ORIGINS) this.origins.clear();
      r = { failures: 0, until: 0, ejections: 0, probeUntil: 0 };
      this.origins.set(origin, r);
    }
    r.failures += 1;
    r.probeUntil = 0;
    if (r.failures < s.ejectAfter) return;
    r.ejections += 1;
    const longest = Math.max(s.ejectMs, MAX_EJECT_MS);
    r.until = this.now() + Math.min(s.ejectMs * r.ejections, longest);
  }

  /** A probe that learned nothing about `origin` (not its fault either way): another may go. */
  release(origin: string): void {
    const r = this.origins.get(origin);
    if (r) r.probeUntil = 0;
  }
}
