import { describe, expect, it } from "vitest";
import { growthRows } from "../../../bench/lib/growth-rows.js";
import type { GrowthSize } from "../../../bench/sections/growth.js";

function size(keys: number, putToStatusMs: number | undefined): GrowthSize {
  const s: GrowthSize = {
    keys,
    pools: keys / 2,
    first_push_ms: 1_000,
    first_push_floor_ms: 500,
    put_to_kv_p50_ms: 100,
    put_to_kv_max_ms: 150,
    put_to_status_p50_ms: putToStatusMs ?? 0,
    put_to_status_max_ms: (putToStatusMs ?? 0) + 50,
    status_bytes: 6 * 1024 * 1024,
    status_get_ms: 60,
    rss_mb_first_push: 150,
    rss_mb: 160,
    range_read_ms: 200,
    compile_ms: 10,
    etcd_range_read_ms: 210,
    reads_per_change: 1,
    map_bytes: 90_000,
    load_ms: 3_000,
    changes: 8,
  };
  if (putToStatusMs !== undefined) return s;
  // A results file written before the operator's figure existed.
  const { put_to_status_p50_ms: _p, put_to_status_max_ms: _m, ...old } = s;
  return old as GrowthSize;
}

const statusRow = (rows: ReturnType<typeof growthRows>) =>
  rows.find((r) => r[0].includes("/status routes_revision"));

describe("growthRows: put → /status beside put → KV", () => {
  it("judges the operator's view at 100k keys against the put → KV goal", () => {
    const slow = statusRow(
      growthRows({
        sizes: { "100000": size(100_000, 620) },
        ratio_100k_10k: null,
        node_options: null,
        duration_s: 1,
      }),
    );
    expect(slow?.[1]).toBe("620 ms (max 670)");
    expect(slow?.[3]).toBe("6.20×");
    expect(slow?.[5]).toBe("MISSED");
    const fast = statusRow(
      growthRows({
        sizes: { "100000": size(100_000, 180) },
        ratio_100k_10k: null,
        node_options: null,
        duration_s: 1,
      }),
    );
    expect(fast?.[5]).toBe("met");
  });

  it("shows the figure without a goal below 100k keys", () => {
    const row = statusRow(
      growthRows({
        sizes: { "10000": size(10_000, 55) },
        ratio_100k_10k: null,
        node_options: null,
        duration_s: 1,
      }),
    );
    expect(row?.[2]).toContain("put→KV p50 100 ms");
    expect(row?.[4]).toBe("");
    expect(row?.[5]).toBe("");
  });

  it("leaves the row out for results that have no such figure", () => {
    const rows = growthRows({
      sizes: { "10000": size(10_000, undefined) },
      ratio_100k_10k: null,
      node_options: null,
      duration_s: 1,
    });
    expect(statusRow(rows)).toBeUndefined();
    expect(rows.length).toBe(2);
  });
});
