import type { SteeringResult } from "../sections/steering.js";
import { check, type Row } from "./row.js";

/** The players' rows: switch time against TTL + one segment, and flaps while nothing changes. */
function switchRows(s: SteeringResult["switch"]): Row[] {
  if (!s) return [];
  const goal = (s.ttl_s + s.segment_s) * 1000;
  const worst = Math.max(s.hls.switch_ms, s.dash.switch_ms);
  return [
    [
      `steer.switch_ms (hls.js / dash.js, pool killed → first segment from the next, TTL ${s.ttl_s} s)`,
      `${s.hls.switch_ms} / ${s.dash.switch_ms} ms`,
      "",
      "",
      `≤ TTL + one segment (${goal} ms)`,
      check(worst <= goal),
    ],
    [
      `steer.steady_flaps (hls.js / dash.js, ${s.steady_s} s with nothing changing)`,
      `${s.hls.steady_flaps} / ${s.dash.steady_flaps}`,
      `${s.hls.steady_reloads} / ${s.dash.steady_reloads} reloads`,
      "",
      "0",
      check(s.hls.steady_flaps === 0 && s.dash.steady_flaps === 0),
    ],
  ];
}

/** The table's `steer.*` rows (docs/reference.md §15): the steering endpoint's cost, TTL and players. */
export function steerRows(r: SteeringResult | null): Row[] {
  if (!r) return [];
  return [
    ...switchRows(r.switch ?? null),
    [
      "steer.cpu_us_per_req (/__edge/steer/hls, workerd)",
      `${r.cpu_us_per_req} µs`,
      `routing ${r.routing_cpu_us_per_req} µs per segment request`,
      `${r.cpu_us_over_routing} µs (CI ${r.cpu_us_over_routing_ci95[0]}–${r.cpu_us_over_routing_ci95[1]})`,
      "",
      "",
    ],
    ["steer.ttl_s", `${r.ttl_s} s`, "STEER_TTL_SECONDS default", "", "", ""],
  ];
}
