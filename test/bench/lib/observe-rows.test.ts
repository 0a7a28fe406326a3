import { describe, expect, it } from "vitest";
import { observeRows } from "../../../bench/lib/observe-rows.js";
import type { ObserveResult } from "../../../bench/sections/viewers-observed.js";

const base: ObserveResult = {
  cpu_us_per_req: 2.1,
  cpu_us_per_req_ci95: [1.5, 2.8],
  cpu_us_on: 120,
  cpu_us_off: 118,
  count_error: 0,
  sent: 600,
  recorded: 600,
  p90_error: 0.04,
  p90_pairs: [],
};
const slow = (ms: number) => ({
  slow_country_to_shed_ms: ms,
  goal_ms: 60_000,
  shed_share: 100,
  requests_per_s: 20,
});
const row = (r: ObserveResult) =>
  observeRows(r).find((x) => x[0].startsWith("observe.slow_country_to_shed_ms"));

describe("observeRows: the slow country's time to shed", () => {
  it("is met at or under 60 s and missed above", () => {
    expect(row({ ...base, slow_country: slow(31_250) })?.slice(1)).toEqual([
      "31250 ms",
      "100 % shed; 20 requests/s; default observer",
      "",
      "≤ 60 s",
      "met",
    ]);
    expect(row({ ...base, slow_country: slow(60_001) })?.[5]).toBe("MISSED");
  });

  it("has no row in results from before it was measured", () => {
    expect(row(base)).toBeUndefined();
    expect(observeRows(base)).toHaveLength(3);
  });
});
