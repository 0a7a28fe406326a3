import { describe, expect, it } from "vitest";
import { bucketIndex, DEFAULT_CANARY_GATES, TTFB_BUCKETS_MS } from "../../core/index.js";
import { canaryFigures } from "../../observer/canary-figures.js";
import { judgeGates } from "../../observer/canary-verdict.js";
import { type MinuteCounts, type MinuteReading, rowKey } from "../../observer/minute-reading.js";
import { canaryDoc } from "../helpers/canary-doc.js";

const START = Date.parse("2026-12-07T10:00:20Z");
const M0 = Math.floor(START / 60_000);
const canary = canaryDoc(
  { "country/BR": { primary: "gru-2", fallbacks: ["fra-1"] } },
  { id: "c7", started_at: new Date(START).toISOString() },
);

/** One row: `requests` requests of which `errors` failed at the origin, each after `ms`. */
function row(
  country: string,
  pool: string,
  side: string,
  requests: number,
  ms: number,
  errors = 0,
): MinuteCounts {
  const ttfb = new Array<number>(TTFB_BUCKETS_MS.length + 1).fill(0);
  ttfb[bucketIndex(TTFB_BUCKETS_MS, ms)] = requests - errors;
  return {
    country,
    pool,
    side,
    requests,
    outcomes: { ok: requests - errors, ...(errors > 0 ? { origin_error: errors } : {}) },
    starved: 0,
    failovers: 0,
    ttfb,
    ttfbSumMs: (requests - errors) * ms,
  };
}

function reading(minutes: Record<number, MinuteCounts[]>, current = M0 + 2): MinuteReading {
  const buckets = new Map<number, Map<string, MinuteCounts>>();
  for (const [m, rows] of Object.entries(minutes))
    buckets.set(
      Number(m),
      new Map(rows.map((r) => [rowKey(r.country, r.pool, r.side), r] as const)),
    );
  return { minute: current, buckets };
}

describe("canaryFigures: both sides over the same countries and minutes", () => {
  it("counts only cells where both sides had viewers, over every pool a side reached, from the canary's start", () => {
    const f = canaryFigures(
      reading({
        // before the canary started: ignored
        [M0 - 1]: [
          row("BR", "gru-2", "c7:canary", 50, 4000),
          row("BR", "fra-1", "c7:stable", 50, 100),
        ],
        [M0]: [
          row("BR", "gru-2", "c7:canary", 20, 4000),
          // a canary viewer failed over to fra-1: still the canary side
          row("BR", "fra-1", "c7:canary", 5, 100),
          row("BR", "fra-1", "c7:stable", 100, 100),
          // AR had only stable viewers this minute: not compared
          row("AR", "fra-1", "c7:stable", 70, 100),
          // no side (a route the canary leaves alone), and another canary's rows
          row("DE", "fra-1", "", 500, 100),
          row("BR", "fra-1", "c6:stable", 90, 100),
        ],
        [M0 + 1]: [
          row("BR", "gru-2", "c7:canary", 10, 4000),
          row("BR", "fra-1", "c7:stable", 40, 100, 4),
        ],
        // the canary side alone in M0 + 2: not compared
        [M0 + 2]: [row("BR", "gru-2", "c7:canary", 30, 4000)],
      }),
      canary,
    );
    expect(f.countries).toEqual(["BR"]);
    expect(f.minutes).toBe(2);
    expect(f.canary.samples).toBe(35);
    expect(f.stable.samples).toBe(140);
    expect(f.stable.error_ratio).toBeCloseTo(4 / 140, 4);
    expect(f.canary.p90_ms).toBe(TTFB_BUCKETS_MS[bucketIndex(TTFB_BUCKETS_MS, 4000)]);
    expect(f.stable.p90_ms).toBe(TTFB_BUCKETS_MS[bucketIndex(TTFB_BUCKETS_MS, 100)]);
  });

  it("has nothing to compare without rows of both sides", () => {
    const f = canaryFigures(reading({ [M0]: [row("BR", "gru-2", "c7:canary", 300, 100)] }), canary);
    expect(f).toMatchObject({
      countries: [],
      minutes: 0,
      canary: { samples: 0 },
      stable: { samples: 0 },
    });
  });
});

describe("judgeGates (defaults: errors <= stable + 1 pt, p90 <= stable × 1.25 + 50 ms, 200 a side)", () => {
  const gates = DEFAULT_CANARY_GATES;
  const figures = (c: [number, number, number | null], s: [number, number, number | null]) => ({
    canary: { samples: c[0], error_ratio: c[1], p90_ms: c[2] },
    stable: { samples: s[0], error_ratio: s[1], p90_ms: s[2] },
    countries: ["BR"],
    minutes: 3,
  });

  it("waits until each side has --min-samples, however bad the canary looks", () => {
    const j = judgeGates(figures([199, 0.5, 4000], [2000, 0, 100]), gates);
    expect(j.verdict).toBe("waiting");
    expect(j.detail).toContain("canary 199 requests, stable 2000");
    expect(judgeGates(figures([500, 0.5, 4000], [150, 0, 100]), gates).verdict).toBe("waiting");
  });

  it("fails on p90 above stable × 1.25 + 50 ms, naming the figures", () => {
    const j = judgeGates(figures([240, 0, 4000], [960, 0, 120]), gates);
    expect(j.verdict).toBe("failing");
    expect(j.detail).toContain("p90 4000 ms > stable 120 ms × 1.25 + 50 ms = 200 ms");
    expect(j.detail).toContain("in BR over 3 minute(s)");
    // at the limit it holds
    expect(judgeGates(figures([240, 0, 200], [960, 0, 120]), gates).verdict).toBe("passing");
  });

  it("fails on an error ratio more than 1 point above stable's", () => {
    const j = judgeGates(figures([400, 0.031, 100], [900, 0.02, 100]), gates);
    expect(j.verdict).toBe("failing");
    expect(j.detail).toContain("errors 3.1 % > stable 2.0 % + 1 pt");
    expect(judgeGates(figures([400, 0.03, 100], [900, 0.02, 100]), gates).verdict).toBe("passing");
  });

  it("a side without a first byte leaves the p90 to the error gate", () => {
    expect(judgeGates(figures([300, 1, null], [900, 0, 100]), gates).verdict).toBe("failing");
    const j = judgeGates(figures([300, 0, null], [900, 0, 100]), gates);
    expect(j).toMatchObject({ verdict: "passing" });
    expect(j.detail).toContain("p90 not judged");
  });

  it("takes the canary's own gates (--gate, --min-samples)", () => {
    const own = { errors_pt: 5, p90_factor: 2, p90_plus_ms: 0, min_samples: 10 };
    expect(judgeGates(figures([20, 0.06, 240], [20, 0.02, 120]), own).verdict).toBe("passing");
    expect(judgeGates(figures([20, 0.06, 241], [20, 0.02, 120]), own).verdict).toBe("failing");
  });
});
