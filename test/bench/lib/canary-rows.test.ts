import { describe, expect, it } from "vitest";
import { canaryRows } from "../../../bench/lib/canary-rows.js";
import type { CanaryResult } from "../../../bench/sections/canary.js";

const base: CanaryResult = {
  rollback_ms: 50_391,
  edge_rollback_ms: 53_245,
  goal_ms: 180_000,
  blast_share: 9.4,
  share: 10,
  blast_goal: 12,
  viewers_seen: 1000,
  viewers_hurt: 94,
  min_samples: 200,
  requests_per_s: 40,
  reason: "rolled back by its judge: gate failed: …",
};
const verdicts = (r: CanaryResult) => canaryRows(r).map((x) => [x[0].split(" ")[0], x[5]]);

describe("canaryRows: a bad canary's rollback and blast radius", () => {
  it("meets the goals at 3 minutes and the share + 2 points, with the figures behind them", () => {
    const rows = canaryRows({ ...base, rollback_ms: 180_000, blast_share: 12 });
    expect(verdicts({ ...base, rollback_ms: 180_000, blast_share: 12 })).toEqual([
      ["canary.rollback_ms", "met"],
      ["canary.blast_share", "met"],
      ["canary.share", ""],
    ]);
    expect(rows[0]?.[2]).toContain("--min-samples 200, 40 requests/s");
    expect(rows[0]?.[2]).toContain("p90 ≤ ×1.25 + 50 ms");
    expect(rows[1]?.slice(1, 5)).toEqual(["12 %", "94 of 1000 viewers", "", "≤ 12 %"]);
    expect(rows[2]?.[1]).toBe("10 %");
  });

  it("misses a rollback past 3 minutes and a blast past the share + 2 points", () => {
    expect(verdicts({ ...base, rollback_ms: 180_001, blast_share: 12.01 })).toEqual([
      ["canary.rollback_ms", "MISSED"],
      ["canary.blast_share", "MISSED"],
      ["canary.share", ""],
    ]);
  });

  it("has no rows in results from before it was measured", () => {
    expect(canaryRows(null)).toEqual([]);
  });
});
