import { describe, expect, it } from "vitest";
import { KEPT_MINUTES, pruneAt } from "../../../worker/observe/kept-minutes.js";
import { minuteOf } from "../../../worker/observe/tally-row.js";

/** Whether the aggregator's prune at `nowMs` keeps the rows of `minute` (its DELETE's bound). */
const kept = (minute: number, nowMs: number) => minute >= minuteOf(nowMs) - KEPT_MINUTES + 1;

describe("the aggregator's prune alarm", () => {
  it("falls when the oldest minute has just left the window, whatever minute that is", () => {
    for (const oldest of [0, 29_000_000, 29_412_345]) {
      const due = pruneAt(oldest);
      expect(kept(oldest, due)).toBe(false);
      expect(kept(oldest, due - 60_000)).toBe(true);
      expect(kept(oldest + 1, due)).toBe(true);
    }
  });

  it("comes within a minute of the last flush's oldest row, not a whole window later", () => {
    const now = 29_412_345 * 60_000 + 30_000;
    const oldestHeld = minuteOf(now) - KEPT_MINUTES + 1;
    expect(pruneAt(oldestHeld) - now).toBeLessThanOrEqual(60_000 + 1_000);
  });
});
