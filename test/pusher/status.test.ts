import { describe, expect, it } from "vitest";
import type { PoolReport } from "../../core/index.js";
import { PusherStatus } from "../../pusher/status.js";

const clock = { now: () => Date.parse("2026-11-29T15:00:00Z") };

describe("PusherStatus: pool reports", () => {
  it("makes the pool list only when /status reads it, from the source set last", () => {
    const status = new PusherStatus("p1", clock);
    expect(status.document().pools).toEqual([]);
    let made = 0;
    const first = [{ pool: "a" }] as unknown as readonly PoolReport[];
    status.showPools(() => {
      made += 1;
      return first;
    });
    expect(made).toBe(0);
    expect(status.document().pools).toBe(first);
    expect(made).toBe(1);
    status.showPools(() => []);
    expect(status.pools).toEqual([]);
  });
});
