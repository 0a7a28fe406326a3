import { describe, expect, it } from "vitest";
import { splitMinutes } from "../../observer/minute-buckets.js";
import { type CounterIncrement, MinuteLedger } from "../../observer/minute-ledger.js";
import type { ObservationDocument } from "../../observer/observation-document.js";
import { bucketOf } from "../../observer/ttfb-buckets.js";

const MINUTE = 29_000_000; // a minute since the epoch
const until = (m: number, s = 30) => new Date(m * 60_000 + s * 1000).toISOString();

/** The edge's buckets: by minute, by `CC/pool`, outcome counts. */
type Buckets = Map<number, Map<string, Record<string, number>>>;

const Q = { p50: 120, p90: 4000, p99: 4800 };

/** The windows of 60·1 … 60·k s the edge answers at minute `m` (widest last, as splitMinutes takes them). */
function windows(b: Buckets, m: number, k: number): ObservationDocument[] {
  const docs: ObservationDocument[] = [];
  for (let j = 1; j <= k; j++) {
    const sums = new Map<string, Record<string, number>>();
    for (const [minute, pairs] of b) {
      if (minute <= m - j || minute > m) continue;
      for (const [key, outcomes] of pairs) {
        const s = sums.get(key) ?? {};
        for (const [o, n] of Object.entries(outcomes)) s[o] = (s[o] ?? 0) + n;
        sums.set(key, s);
      }
    }
    docs.push({
      window_s: 60 * j,
      until: until(m),
      rows: [...sums].map(([key, outcomes]) => {
        const [country = "", pool = ""] = key.split("/");
        return {
          country,
          pool,
          requests: Object.values(outcomes).reduce((a, c) => a + c, 0),
          outcomes,
          failovers: 0,
          starved: outcomes.ok ? 1 : 0,
          ttfb_ms: Q,
        };
      }),
    });
  }
  return docs;
}

function add(b: Buckets, m: number, key: string, outcomes: Record<string, number>): void {
  const pairs = b.get(m) ?? new Map<string, Record<string, number>>();
  const s = pairs.get(key) ?? {};
  for (const [o, n] of Object.entries(outcomes)) s[o] = (s[o] ?? 0) + n;
  pairs.set(key, s);
  b.set(m, pairs);
}

/** Sums increments by `CC/pool/outcome`. */
function total(incs: readonly CounterIncrement[], into = new Map<string, number>()) {
  for (const i of incs)
    for (const [o, n] of Object.entries(i.outcomes))
      into.set(`${i.country}/${i.pool}/${o}`, (into.get(`${i.country}/${i.pool}/${o}`) ?? 0) + n);
  return into;
}

const take = (l: MinuteLedger, b: Buckets, m: number, k = 2, baseline = false) => {
  const r = splitMinutes(windows(b, m, k));
  if (!r) throw new Error("straddled");
  return l.take(r, baseline);
};

describe("MinuteLedger", () => {
  it("counts what each minute gained, however often the minute is read", () => {
    const b: Buckets = new Map();
    const l = new MinuteLedger();
    const sums = new Map<string, number>();
    add(b, MINUTE, "BR/us-east", { ok: 10, timeout: 2 });
    total(take(l, b, MINUTE).increments, sums);
    total(take(l, b, MINUTE).increments, sums);
    add(b, MINUTE, "BR/us-east", { ok: 5 });
    add(b, MINUTE, "US/us-east", { ok: 7 });
    total(take(l, b, MINUTE).increments, sums);
    // the next minute begins; a late flush still lands in the previous one
    add(b, MINUTE, "BR/us-east", { origin_error: 3 });
    add(b, MINUTE + 1, "BR/us-east", { ok: 4 });
    total(take(l, b, MINUTE + 1, 3).increments, sums);
    total(take(l, b, MINUTE + 1).increments, sums);
    expect(Object.fromEntries(sums)).toEqual({
      "BR/us-east/ok": 19,
      "BR/us-east/timeout": 2,
      "BR/us-east/origin_error": 3,
      "US/us-east/ok": 7,
    });
  });

  it("a baseline counts nothing of what the edge held before the first reading", () => {
    const b: Buckets = new Map();
    add(b, MINUTE, "BR/us-east", { ok: 100 });
    const l = new MinuteLedger();
    expect(take(l, b, MINUTE, 2, true).increments).toEqual([]);
    add(b, MINUTE, "BR/us-east", { ok: 3 });
    expect(Object.fromEntries(total(take(l, b, MINUTE).increments))).toEqual({
      "BR/us-east/ok": 3,
    });
  });

  it("an edge whose current minute restarted below the count: what it holds now is new", () => {
    const b: Buckets = new Map();
    const l = new MinuteLedger();
    add(b, MINUTE, "BR/us-east", { ok: 50 });
    take(l, b, MINUTE);
    b.clear();
    add(b, MINUTE, "BR/us-east", { ok: 8 });
    const t = take(l, b, MINUTE);
    expect(t.resets).toBe(1);
    expect(Object.fromEntries(total(t.increments))).toEqual({ "BR/us-east/ok": 8 });
    add(b, MINUTE, "BR/us-east", { ok: 2 });
    expect(Object.fromEntries(total(take(l, b, MINUTE).increments))).toEqual({
      "BR/us-east/ok": 2,
    });
  });

  it("an older minute read short (a flush between two reads) is counted in full later, never twice", () => {
    const l = new MinuteLedger();
    const b: Buckets = new Map();
    add(b, MINUTE - 1, "BR/us-east", { ok: 10 });
    add(b, MINUTE, "BR/us-east", { ok: 10 });
    take(l, b, MINUTE);
    // window=120 read before a flush of 5 into the current minute, window=60 after it
    const wide = windows(b, MINUTE, 2)[1]!;
    add(b, MINUTE, "BR/us-east", { ok: 5 });
    const narrow = windows(b, MINUTE, 1)[0]!;
    const r = splitMinutes([narrow, wide]);
    const sums = total(l.take(r!).increments);
    total(take(l, b, MINUTE).increments, sums);
    expect(Object.fromEntries(sums)).toEqual({ "BR/us-east/ok": 5 });
  });

  it("a ledger brought back from its JSON goes on without counting twice, and reads the minutes it missed", () => {
    const b: Buckets = new Map();
    const first = new MinuteLedger();
    add(b, MINUTE, "BR/us-east", { ok: 10 });
    take(first, b, MINUTE);
    const saved = JSON.parse(JSON.stringify(first.toJSON()));
    add(b, MINUTE, "BR/us-east", { ok: 4 });
    add(b, MINUTE + 2, "BR/us-east", { ok: 6 });
    const again = MinuteLedger.fromJSON(saved);
    expect(again.lastMinute).toBe(MINUTE);
    const sums = total(take(again, b, MINUTE + 2, 4).increments);
    expect(Object.fromEntries(sums)).toEqual({ "BR/us-east/ok": 10 });
  });

  it("the TTFB counts add up to the requests with a TTFB, and their p90 is in the edge's p90's bucket", () => {
    const b: Buckets = new Map();
    const l = new MinuteLedger();
    const hist = new Array<number>(30).fill(0);
    for (let i = 0; i < 7; i++) {
      add(b, MINUTE, "BR/us-east", { ok: 13, client_error: 1, timeout: 2 });
      for (const inc of take(l, b, MINUTE).increments)
        inc.ttfb.forEach((n, k) => {
          hist[k] = (hist[k] ?? 0) + n;
        });
    }
    const n = hist.reduce((a, c) => a + c, 0);
    expect(n).toBe(7 * 14);
    const cumulative = hist.map((_, k) => hist.slice(0, k + 1).reduce((a, c) => a + c, 0));
    const p90Bucket = cumulative.findIndex((c) => c >= 0.9 * n);
    expect(p90Bucket).toBe(bucketOf(Q.p90));
  });

  it("forgets minutes the edge no longer keeps", () => {
    const b: Buckets = new Map();
    const l = new MinuteLedger();
    add(b, MINUTE, "BR/us-east", { ok: 1 });
    take(l, b, MINUTE);
    take(l, b, MINUTE + 20);
    expect(l.toJSON().minutes.map(([m]) => m)).not.toContain(MINUTE);
  });
});

describe("splitMinutes", () => {
  it("refuses reads that straddle a minute", () => {
    const b: Buckets = new Map();
    add(b, MINUTE, "BR/us-east", { ok: 1 });
    const [one] = windows(b, MINUTE, 1);
    const [, two] = windows(b, MINUTE + 1, 2);
    expect(splitMinutes([one!, two!])).toBeNull();
  });
});
