import type { SteeringResult } from "../sections/steering.js";
import type { Row } from "./row.js";

/** The table's `steer.*` rows (docs/reference.md §15): the steering endpoint's cost and TTL. */
export function steerRows(r: SteeringResult | null): Row[] {
  if (!r) return [];
  return [
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
