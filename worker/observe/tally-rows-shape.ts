import { NO_POOL } from "../../core/contract/observations.js";
import { isPoolName } from "../../core/contract/pool-name.js";
import { TALLY_LENGTHS, type Tally } from "./tally.js";
import { CANARY_SIDE, type TallyRow } from "./tally-row.js";

/** Rows one flush may carry. */
const MAX_ROWS = 4096;
const COUNTRY = /^[A-Z][A-Z0-9]$/;

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

function isCounts(v: unknown, length: number): v is number[] {
  return Array.isArray(v) && v.length === length && v.every(isCount);
}

function isTally(v: unknown): v is Tally {
  if (typeof v !== "object" || v === null) return false;
  const t = v as Record<string, unknown>;
  return (
    isCount(t.requests) &&
    isCounts(t.outcomes, TALLY_LENGTHS.outcomes) &&
    // Absent in a flush from an isolate that does not count cache results yet.
    (t.cache === undefined || isCounts(t.cache, TALLY_LENGTHS.cache)) &&
    isCount(t.failovers) &&
    isCounts(t.ttfb, TALLY_LENGTHS.ttfb) &&
    typeof t.ttfbSumMs === "number" &&
    Number.isFinite(t.ttfbSumMs) &&
    t.ttfbSumMs >= 0 &&
    isCount(t.starved) &&
    isCount(t.cmcd) &&
    isCounts(t.throughput, TALLY_LENGTHS.throughput)
  );
}

function isRow(v: unknown): v is TallyRow {
  if (typeof v !== "object" || v === null) return false;
  const r = v as Record<string, unknown>;
  return (
    isCount(r.minute) &&
    typeof r.country === "string" &&
    COUNTRY.test(r.country) &&
    typeof r.pool === "string" &&
    (r.pool === NO_POOL || isPoolName(r.pool)) &&
    (r.side === undefined || (typeof r.side === "string" && CANARY_SIDE.test(r.side))) &&
    isTally(r.tally)
  );
}

/**
 * The rows of a flush's body (`{"rows":[…]}`), or `null` when anything in it is not what an
 * isolate sends: only counts, a country code, a pool name and a canary side get stored.
 */
export function tallyRowsOf(body: unknown): TallyRow[] | null {
  if (typeof body !== "object" || body === null) return null;
  const rows = (body as { rows?: unknown }).rows;
  if (!Array.isArray(rows) || rows.length > MAX_ROWS) return null;
  return rows.every(isRow) ? rows : null;
}
