import { describe, expect, it } from "vitest";
import { backoffDelay } from "../../pusher/backoff.js";

describe("backoffDelay", () => {
  it("grows exponentially, is capped, and honours Retry-After", () => {
    const policy = { baseMs: 100, maxMs: 1_000 };
    expect(backoffDelay(1, policy, undefined, () => 1)).toBe(100);
    expect(backoffDelay(3, policy, undefined, () => 1)).toBe(400);
    expect(backoffDelay(20, policy, undefined, () => 1)).toBe(1_000);
    expect(backoffDelay(3, policy, undefined, () => 0)).toBe(200);
    expect(backoffDelay(1, policy, 5_000, () => 1)).toBe(5_000);
  });
});
