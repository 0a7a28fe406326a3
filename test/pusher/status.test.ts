import { BrokenCircuitError } from "cockatiel";
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

describe("PusherStatus: last_error", () => {
  it("names the etcd failure that opened the circuit breaker while the breaker holds calls back", () => {
    const status = new PusherStatus("p1", clock);
    const refused = new Error(
      "14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED",
    );
    status.etcdFailed(refused);
    status.etcdFailed(new BrokenCircuitError());
    expect(status.document().last_error?.message).toBe(
      "etcd: Error: 14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED (calls held back by the circuit breaker)",
    );
    // etcd answered in between: an open breaker later names no stale cause.
    status.etcdOk();
    status.etcdFailed(new BrokenCircuitError());
    expect(status.document().last_error?.message).toBe(
      "etcd: Error: Execution prevented because the circuit breaker is open",
    );
  });
});
