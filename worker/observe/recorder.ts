import { addSample, emptyTally, type ViewerSample } from "./tally.js";
import { minuteOf, type TallyRow } from "./tally-row.js";

/** Rows one isolate holds before it flushes whatever the interval says (a runaway bound). */
const MAX_ROWS = 4096;

/**
 * The isolate's sums per (minute, country, pool, canary side) since its last flush. Recording is a map
 * lookup and a few additions; `takeIfDue` hands the rows over once per flush interval.
 */
export class ViewerRecorder {
  #rows = new Map<string, TallyRow>();
  /** When the oldest unflushed request was recorded; 0 when none is held. */
  #heldSince = 0;

  /** Adds one request, recorded at `nowMs`, to its (minute, country, pool, canary side). */
  record(nowMs: number, country: string, pool: string, side: string, sample: ViewerSample): void {
    const minute = minuteOf(nowMs);
    const key = `${minute}|${country}|${pool}|${side}`;
    let row = this.#rows.get(key);
    if (!row) {
      row = { minute, country, pool, ...(side === "" ? {} : { side }), tally: emptyTally() };
      this.#rows.set(key, row);
    }
    addSample(row.tally, sample);
    if (this.#heldSince === 0) this.#heldSince = nowMs;
  }

  /**
   * The rows held, emptied out, once `flushMs` has passed since the oldest of them was recorded
   * (or the isolate holds too many); otherwise `null`.
   */
  takeIfDue(nowMs: number, flushMs: number): TallyRow[] | null {
    if (this.#heldSince === 0) return null;
    if (nowMs - this.#heldSince < flushMs && this.#rows.size < MAX_ROWS) return null;
    const rows = [...this.#rows.values()];
    this.#rows = new Map();
    this.#heldSince = 0;
    return rows;
  }
}
