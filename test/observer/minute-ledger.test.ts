import { describe, expect, it } from "vitest";
import { CACHE_RESULTS, type CacheResult, OUTCOMES, type Outcome } from "../../core/index.js";
import { type CounterIncrement, MinuteLedger } from "../../observer/minute-ledger.js";
import { minuteReading } from "../../observer/minute-reading.js";
import { ObservationDocumentSchema } from "../../observer/observation-document.js";
import { observationRows } from "../../worker/observe/observation-rows.js";
import { addSample, emptyTally } from "../../worker/observe/tally.js";
import type { TallyRow } from "../../worker/observe/tally-row.js";

const MINUTE = 29_000_000; // a minute since the epoch

/** The edge's aggregator: its tallies by `minute|CC/pool`, filled with the Worker's own code. */
type Edge = Map<string, TallyRow>;

function add(
  edge: Edge,
  minute: number,
  pair: string,
  outcomes: Partial<Record<Outcome, number>>,
  ttfbMs = 120,
): void {
  const [country = "", pool = ""] = pair.split("/");
  const key = `${minute}|${pair}`;
  const row = edge.get(key) ?? { minute, country, pool, tally: emptyTally() };
  for (const [o, n] of Object.entries(outcomes))
    for (let i = 0; i < (n ?? 0); i++)
      addSample(row.tally, {
        outcome: OUTCOMES.indexOf(o as Outcome),
        failover: false,
        ttfbMs: o === "timeout" ? null : ttfbMs,
        starved: o === "ok" ? i === 0 : null,
        throughputKbps: null,
      });
  edge.set(key, row);
}

/**
 * The edge's `by=minute` answer at minute `m` for a window of 60·k s (the current minute and
 * the k before it), made by the Worker's code and checked as the observer checks it.
 */
function answer(edge: Edge, m: number, k = 1) {
  const since = m - k;
  const rows = [...edge.values()].filter((r) => r.minute >= since && r.minute <= m);
  return ObservationDocumentSchema.parse(
    JSON.parse(
      JSON.stringify({
        window_s: 60 * k,
        since: new Date(since * 60_000).toISOString(),
        until: new Date(m * 60_000 + 30_000).toISOString(),
        rows: observationRows(rows, true),
      }),
    ),
  );
}

const take = (l: MinuteLedger, edge: Edge, m: number, k = 1, baseline = false) =>
  l.take(minuteReading(answer(edge, m, k)), baseline);

/** Sums increments by `CC/pool/outcome`. */
function total(incs: readonly CounterIncrement[], into = new Map<string, number>()) {
  for (const i of incs)
    for (const [o, n] of Object.entries(i.outcomes))
      into.set(`${i.country}/${i.pool}/${o}`, (into.get(`${i.country}/${i.pool}/${o}`) ?? 0) + n);
  return into;
}

describe("MinuteLedger", () => {
  it("counts what each minute gained, however often the minute is read, late flushes included", () => {
    const edge: Edge = new Map();
    const l = new MinuteLedger();
    const sums = new Map<string, number>();
    add(edge, MINUTE, "BR/us-east", { ok: 10, timeout: 2 });
    total(take(l, edge, MINUTE).increments, sums);
    total(take(l, edge, MINUTE).increments, sums);
    add(edge, MINUTE, "BR/us-east", { ok: 5 });
    add(edge, MINUTE, "US/us-east", { ok: 7 });
    total(take(l, edge, MINUTE).increments, sums);
    // the next minute begins; a late flush still lands in the previous one
    add(edge, MINUTE, "BR/us-east", { origin_error: 3 });
    add(edge, MINUTE + 1, "BR/us-east", { ok: 4 });
    total(take(l, edge, MINUTE + 1, 3).increments, sums);
    total(take(l, edge, MINUTE + 1).increments, sums);
    expect(Object.fromEntries(sums)).toEqual({
      "BR/us-east/ok": 19,
      "BR/us-east/timeout": 2,
      "BR/us-east/origin_error": 3,
      "US/us-east/ok": 7,
    });
  });

  it("a baseline counts nothing of what the edge held before the first reading", () => {
    const edge: Edge = new Map();
    add(edge, MINUTE, "BR/us-east", { ok: 100 });
    const l = new MinuteLedger();
    expect(take(l, edge, MINUTE, 1, true).increments).toEqual([]);
    add(edge, MINUTE, "BR/us-east", { ok: 3 });
    expect(Object.fromEntries(total(take(l, edge, MINUTE).increments))).toEqual({
      "BR/us-east/ok": 3,
    });
  });

  it("a minute the edge holds below the count lost its sums: what it holds now is new", () => {
    const edge: Edge = new Map();
    const l = new MinuteLedger();
    add(edge, MINUTE, "BR/us-east", { ok: 50 });
    take(l, edge, MINUTE);
    edge.clear();
    add(edge, MINUTE, "BR/us-east", { ok: 8 });
    const t = take(l, edge, MINUTE);
    expect(t.resets).toBe(1);
    expect(Object.fromEntries(total(t.increments))).toEqual({ "BR/us-east/ok": 8 });
    add(edge, MINUTE, "BR/us-east", { ok: 2 });
    expect(Object.fromEntries(total(take(l, edge, MINUTE).increments))).toEqual({
      "BR/us-east/ok": 2,
    });
  });

  it("a ledger brought back from its JSON goes on without counting twice, and reads the minutes it missed", () => {
    const edge: Edge = new Map();
    const first = new MinuteLedger();
    add(edge, MINUTE, "BR/us-east", { ok: 10 });
    take(first, edge, MINUTE);
    const saved = JSON.parse(JSON.stringify(first.toJSON()));
    add(edge, MINUTE, "BR/us-east", { ok: 4 });
    add(edge, MINUTE + 2, "BR/us-east", { ok: 6 });
    const again = MinuteLedger.fromJSON(saved);
    expect(again.lastMinute).toBe(MINUTE);
    const sums = total(take(again, edge, MINUTE + 2, 2).increments);
    expect(Object.fromEntries(sums)).toEqual({ "BR/us-east/ok": 10 });
  });

  it("the TTFB counts and their sum are the edge's own, bucket for bucket, however the minute is read", () => {
    const edge: Edge = new Map();
    const l = new MinuteLedger();
    const hist = new Array<number>(36).fill(0);
    let sumS = 0;
    const times = [12, 80, 80, 450, 3900, 31_000, 7];
    for (let i = 0; i < 7; i++) {
      add(edge, MINUTE, "BR/us-east", { ok: 13, client_error: 1, timeout: 2 }, times[i]);
      for (const inc of take(l, edge, MINUTE).increments) {
        inc.ttfb.forEach((n, k) => {
          hist[k] = (hist[k] ?? 0) + n;
        });
        sumS += inc.ttfbSeconds;
      }
    }
    const tally = edge.get(`${MINUTE}|BR/us-east`)?.tally;
    expect(hist).toEqual(tally?.ttfb);
    expect(hist.reduce((a, c) => a + c, 0)).toBe(7 * 14);
    expect(sumS).toBeCloseTo(times.reduce((a, t) => a + 14 * t, 0) / 1000, 9);
  });

  it("counts the cache results each minute gained, and a state file without them goes on", () => {
    const edge: Edge = new Map();
    const l = new MinuteLedger();
    const hits = (results: Partial<Record<CacheResult, number>>) => {
      const row = edge.get(`${MINUTE}|BR/us-east`) ?? {
        minute: MINUTE,
        country: "BR",
        pool: "us-east",
        tally: emptyTally(),
      };
      for (const r of CACHE_RESULTS)
        for (let i = 0; i < (results[r] ?? 0); i++)
          addSample(row.tally, {
            outcome: 0,
            cache: CACHE_RESULTS.indexOf(r),
            failover: false,
            ttfbMs: null,
            starved: null,
            throughputKbps: null,
          });
      edge.set(`${MINUTE}|BR/us-east`, row);
    };
    const sums = new Map<string, number>();
    const sum = (incs: readonly CounterIncrement[]) => {
      for (const i of incs)
        for (const [r, n] of Object.entries(i.cache)) sums.set(r, (sums.get(r) ?? 0) + n);
    };
    hits({ hit: 5, miss: 1 });
    sum(take(l, edge, MINUTE).increments);
    sum(take(l, edge, MINUTE).increments);
    hits({ hit: 3, bypass: 2 });
    sum(take(l, edge, MINUTE).increments);
    expect(Object.fromEntries(sums)).toEqual({ hit: 8, miss: 1, bypass: 2 });

    // a state file written before cache results were counted has no `cache` in its pairs
    const saved = JSON.parse(JSON.stringify(l.toJSON()));
    for (const [, pairs] of saved.minutes) for (const [, seen] of pairs) delete seen.cache;
    const again = MinuteLedger.fromJSON(saved);
    hits({ stale: 1 });
    sums.clear();
    sum(take(again, edge, MINUTE).increments);
    // what the old file never counted is counted once, and nothing else twice
    expect(Object.fromEntries(sums)).toEqual({ hit: 8, miss: 1, bypass: 2, stale: 1 });
    sums.clear();
    sum(take(again, edge, MINUTE).increments);
    expect(Object.fromEntries(sums)).toEqual({});
  });

  it("forgets minutes the edge no longer keeps", () => {
    const edge: Edge = new Map();
    const l = new MinuteLedger();
    add(edge, MINUTE, "BR/us-east", { ok: 1 });
    take(l, edge, MINUTE);
    take(l, edge, MINUTE + 20);
    expect(l.toJSON().minutes.map(([m]) => m)).not.toContain(MINUTE);
  });

  it("holds a pair, canary sides folded into it, until the edge's 16 minutes pass without its requests", () => {
    const edge: Edge = new Map();
    const l = new MinuteLedger();
    add(edge, MINUTE, "BR/us-east", { ok: 1 });
    add(edge, MINUTE + 5, "DE/fra-1", { ok: 1 });
    const canary = edge.get(`${MINUTE}|BR/us-east`);
    if (canary)
      edge.set(`${MINUTE}|BR/us-east|c7:canary`, { ...canary, pool: "us-east", side: "c7:canary" });
    take(l, edge, MINUTE);
    expect(l.toJSON().minutes[0]?.[1].map(([k]) => k)).toContain("BR/us-east/c7:canary");
    take(l, edge, MINUTE + 5, 5);
    expect([...l.pairs()].sort()).toEqual(["BR/us-east", "DE/fra-1"]);
    take(l, edge, MINUTE + 15, 10);
    expect([...l.pairs()].sort()).toEqual(["BR/us-east", "DE/fra-1"]);
    take(l, edge, MINUTE + 16, 1);
    expect([...l.pairs()]).toEqual(["DE/fra-1"]);
    take(l, edge, MINUTE + 21, 5);
    expect([...l.pairs()]).toEqual([]);
  });
});

describe("ObservationDocumentSchema", () => {
  it("refuses a row whose histogram is not over the edge's buckets", () => {
    const edge: Edge = new Map();
    add(edge, MINUTE, "BR/us-east", { ok: 1 });
    const doc = JSON.parse(JSON.stringify(answer(edge, MINUTE)));
    doc.rows[0].ttfb_counts.push(0);
    const r = ObservationDocumentSchema.safeParse(doc);
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path.join(".")).toBe("rows.0.ttfb_counts");
  });

  it("refuses the window answer without by=minute (no minute per row)", () => {
    const edge: Edge = new Map();
    add(edge, MINUTE, "BR/us-east", { ok: 1 });
    const doc = JSON.parse(JSON.stringify(answer(edge, MINUTE)));
    delete doc.rows[0].minute;
    expect(ObservationDocumentSchema.safeParse(doc).success).toBe(false);
  });
});
