import { describe, expect, it } from "vitest";
import { StatusHysteresis } from "../../heartbeat/status-hysteresis.js";

describe("StatusHysteresis", () => {
  it("needs 3 consecutive failures to go unhealthy and 2 consecutive successes to come back", () => {
    const h = new StatusHysteresis("healthy");
    expect([false, false, true, false, false].map((ok) => h.record(ok))).toEqual(
      Array(5).fill("healthy"),
    );
    expect(h.record(false)).toBe("unhealthy");
    expect(h.record(true)).toBe("unhealthy");
    expect(h.record(false)).toBe("unhealthy");
    expect(h.record(true)).toBe("unhealthy");
    expect(h.record(true)).toBe("healthy");
  });
});
