import { describe, expect, it } from "vitest";
import { steerRows } from "../../../bench/lib/steer-rows.js";
import type { SteeringResult } from "../../../bench/sections/steering.js";

const base: SteeringResult = {
  ttl_s: 30,
  cpu_us_per_req: 320,
  routing_cpu_us_per_req: 685,
  cpu_us_over_routing: -312,
  cpu_us_over_routing_ci95: [-344, -288],
  rps: 2980,
  routing_rps: 1394,
  switch: null,
};
const player = (switch_ms: number, steady_flaps = 0) => ({
  switch_ms,
  steady_flaps,
  steady_reloads: 30,
});
const withSwitch = (hls: number, dash: number, flaps = 0): SteeringResult => ({
  ...base,
  switch: { ttl_s: 10, segment_s: 2, steady_s: 300, hls: player(hls, flaps), dash: player(dash) },
});
const row = (r: SteeringResult, name: string) => steerRows(r).find((x) => x[0].startsWith(name));

describe("steerRows: the players' switch and steadiness", () => {
  it("has no player rows when the players' run failed", () => {
    expect(steerRows(base).map((r) => r[0].split(" ")[0])).toEqual([
      "steer.cpu_us_per_req",
      "steer.ttl_s",
    ]);
  });

  it("meets the switch goal at TTL + one segment and misses it past, by the slower player", () => {
    expect(row(withSwitch(1203, 12_000), "steer.switch_ms")?.slice(1)).toEqual([
      "1203 / 12000 ms",
      "",
      "",
      "≤ TTL + one segment (12000 ms)",
      "met",
    ]);
    expect(row(withSwitch(1203, 12_001), "steer.switch_ms")?.[5]).toBe("MISSED");
  });

  it("meets the steadiness goal only with no flap from either player", () => {
    const steady = row(withSwitch(1, 1), "steer.steady_flaps");
    expect(steady?.[0]).toContain("300 s with nothing changing");
    expect(steady?.slice(1)).toEqual(["0 / 0", "30 / 30 reloads", "", "0", "met"]);
    expect(row(withSwitch(1, 1, 2), "steer.steady_flaps")?.[5]).toBe("MISSED");
  });
});
