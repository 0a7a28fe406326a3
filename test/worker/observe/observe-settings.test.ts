import { describe, expect, it } from "vitest";
import { parseObserveSettings } from "../../../worker/observe/observe-settings.js";

describe("parseObserveSettings", () => {
  it("records by default, flushes every 10 s, serves nothing without a token", () => {
    expect(parseObserveSettings({})).toEqual({ on: true, token: null, flushMs: 10_000 });
  });

  it('turns recording off with OBSERVE="off" in any case, and only with that', () => {
    expect(parseObserveSettings({ OBSERVE: " OFF " }).on).toBe(false);
    expect(parseObserveSettings({ OBSERVE: "no" }).on).toBe(true);
  });

  it.each([
    ["0", 0],
    ["30", 30_000],
    ["100000", 300_000],
    ["-1", 10_000],
    ["1.5", 10_000],
    ["soon", 10_000],
  ])("OBSERVE_FLUSH_SECONDS=%s flushes every %i ms (0–300 s; garbage: 10 s)", (raw, ms) => {
    expect(parseObserveSettings({ OBSERVE_FLUSH_SECONDS: raw }).flushMs).toBe(ms);
  });

  it("treats an empty OBSERVE_TOKEN as unset", () => {
    expect(parseObserveSettings({ OBSERVE_TOKEN: "" }).token).toBeNull();
  });
});
