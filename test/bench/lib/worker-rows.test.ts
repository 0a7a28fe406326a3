import { describe, expect, it } from "vitest";
import { workerRows } from "../../../bench/lib/worker-rows.js";
import type { WorkerMemoryResult } from "../../../bench/sections/worker-memory.js";

const memory: WorkerMemoryResult = {
  rss_mb_start: 95.2,
  phases: [],
  rss_kib_per_1k_routing: 12.5,
  rss_kib_per_1k_pass: -40.1,
  heap_mb_routing: 1.07,
  heap_mb_pass: null,
  rss_mb_end: 693.4,
  requests_per_phase: 15_000,
  connections: 16,
};

describe("workerRows: the routing Worker's memory beside the pass-through's", () => {
  it("shows both sides' growth per 1,000 requests, their heaps and workerd's RSS", () => {
    const row = workerRows({ memory }).find((r) => r[0].startsWith("Worker memory"));
    expect(row?.[1]).toBe("12.5 KiB RSS / 1k req, heap 1.07 MiB");
    expect(row?.[2]).toBe("-40.1 KiB / 1k req, heap ? MiB pass-through");
    expect(row?.[3]).toBe("workerd 95.2 → 693.4 MiB");
  });

  it("has no memory row when the measurement did not run", () => {
    expect(workerRows({}).some((r) => r[0].startsWith("Worker memory"))).toBe(false);
  });
});
