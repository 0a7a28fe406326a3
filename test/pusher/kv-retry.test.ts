import { describe, expect, it } from "vitest";
import { KvError } from "../../adapters/kv/kv-sink.js";
import { kvRetryDelay } from "../../pusher/kv-retry.js";

const POLICY = { baseMs: 100, maxMs: 10_000 };

describe("kvRetryDelay", () => {
  it("backs off exponentially for retryable failures, within [exp/2, exp]", () => {
    for (const [attempts, exp] of [
      [1, 100],
      [2, 200],
      [5, 1_600],
      [40, 10_000],
    ] as const) {
      const r = kvRetryDelay(new KvError("server-error", "500"), attempts, POLICY);
      expect(r.retryable).toBe(true);
      expect(r.delayMs).toBeGreaterThanOrEqual(exp / 2);
      expect(r.delayMs).toBeLessThanOrEqual(exp);
    }
  });

  it("never waits less than the API's Retry-After", () => {
    const r = kvRetryDelay(new KvError("rate-limited", "429", 7_000), 1, POLICY);
    expect(r).toMatchObject({ retryable: true });
    expect(r.delayMs).toBeGreaterThanOrEqual(7_000);
  });

  it("retries what retrying cannot fix at the cap, from the first failure", () => {
    for (const code of ["unauthorized", "bad-request"] as const) {
      const r = kvRetryDelay(new KvError(code, "no"), 1, POLICY);
      expect(r.retryable).toBe(false);
      expect(r.delayMs).toBeGreaterThanOrEqual(POLICY.maxMs / 2);
    }
  });

  it("treats an unknown error (not a KvError) as retryable", () => {
    const r = kvRetryDelay(new Error("socket hang up"), 1, POLICY);
    expect(r.retryable).toBe(true);
    expect(r.delayMs).toBeLessThanOrEqual(100);
  });
});
