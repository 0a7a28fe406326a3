import { describe, expect, it } from "vitest";
import { countSeries } from "../../soak/series-count.js";

const TEXT = `# HELP up 1
# TYPE up gauge
up 1
# TYPE edge_pusher_pool_heartbeat gauge
edge_pusher_pool_heartbeat{pool="p01"} 1
edge_pusher_pool_heartbeat{pool="p02"} 0
# TYPE nodejs_gc_duration_seconds histogram
nodejs_gc_duration_seconds_bucket{le="0.001",kind="minor"} 1
nodejs_gc_duration_seconds_bucket{le="+Inf",kind="minor"} 2
nodejs_gc_duration_seconds_sum{kind="minor"} 0.01
nodejs_gc_duration_seconds_count{kind="minor"} 2
nodejs_gc_duration_seconds_bucket{le="0.001",kind="major"} 0
nodejs_gc_duration_seconds_bucket{le="+Inf",kind="major"} 1
nodejs_gc_duration_seconds_sum{kind="major"} 0.02
nodejs_gc_duration_seconds_count{kind="major"} 1
# TYPE edge_pusher_pushes_total counter
edge_pusher_pushes_total 7
`;

describe("series of a /metrics text", () => {
  it("one per metric and label set; a histogram's buckets, _sum and _count count once", () => {
    // up, two pools, two GC kinds, pushes_total
    expect(countSeries(TEXT)).toBe(6);
  });

  it("a counter named …_count that is not a histogram's stays its own series", () => {
    expect(countSeries("# TYPE retries_count counter\nretries_count 3\nretries 1\n")).toBe(2);
  });
});
