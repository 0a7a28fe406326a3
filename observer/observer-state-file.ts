import { readFile, rename, writeFile } from "node:fs/promises";
import { z } from "zod";
import { TTFB_BUCKETS_MS } from "../core/index.js";
import type { LedgerJson } from "./minute-ledger.js";
import type { CounterTotals } from "./observer-metrics.js";

/** What the observer keeps across its restarts (`--state FILE`). */
export interface ObserverState {
  readonly v: 2;
  readonly ledger: LedgerJson;
  readonly totals: CounterTotals;
}

const n = z.number().nonnegative().finite();
/** A TTFB histogram over the edge's buckets: a file of other bounds is not this observer's. */
const ttfb = z.array(n).length(TTFB_BUCKETS_MS.length + 1);
const seen = z.object({
  requests: n,
  outcomes: z.record(z.string(), n),
  cache: z.record(z.string(), n).optional(),
  starved: n,
  failovers: n,
  ttfb,
  ttfbSumMs: n,
});
const pair = { country: z.string(), pool: z.string() };
const StateSchema = z.object({
  v: z.literal(2),
  ledger: z.object({
    minutes: z.array(z.tuple([z.number().int(), z.array(z.tuple([z.string(), seen]))])),
  }),
  totals: z.object({
    requests: z.array(z.object({ ...pair, outcome: z.string(), n })),
    starved: z.array(z.object({ ...pair, n })),
    failovers: z.array(z.object({ ...pair, n })),
    cache: z.array(z.object({ ...pair, result: z.string(), n })).optional(),
    ttfb: z.array(z.object({ ...pair, buckets: ttfb, sum: n })),
  }),
});

/** Why a state file was not used. */
export type StateFileProblem = "unreadable" | "invalid";

/** The state file: read once at start, written after each poll that counted something. */
export class ObserverStateFile {
  constructor(readonly path: string) {}

  /**
   * The saved state; `null` when there is no file yet. A file that cannot be read or is not a
   * state is reported and ignored (the observer starts afresh, without counting twice).
   */
  async load(): Promise<{ state: ObserverState | null; problem?: StateFileProblem }> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return { state: null };
      return { state: null, problem: "unreadable" };
    }
    try {
      const parsed = StateSchema.safeParse(JSON.parse(text));
      return parsed.success
        ? { state: parsed.data as ObserverState }
        : { state: null, problem: "invalid" };
    } catch {
      return { state: null, problem: "invalid" };
    }
  }

  /** Writes the state whole, through a temporary file renamed over the old one. */
  async save(state: ObserverState): Promise<void> {
    const tmp = `${this.path}.tmp`;
    await writeFile(tmp, JSON.stringify(state), { mode: 0o600 });
    await rename(tmp, this.path);
  }
}
