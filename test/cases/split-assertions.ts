import { expect } from "vitest";
import { expectedShares, type SplitCase, type SplitResult } from "./split-cases.js";

/** The table's promises, checked the same way for Node's and workerd's results. */
export function assertSplitResult(c: SplitCase, r: SplitResult): void {
  expect(r.name).toBe(c.name);
  expect(r.unstable).toBe(0);
  const near = (got: Readonly<Record<string, number>>, want: Record<string, number>) => {
    expect(Object.keys(got).sort()).toEqual(Object.keys(want).sort());
    for (const [pool, share] of Object.entries(want))
      expect(Math.abs((got[pool] ?? 0) - share), `${pool} share`).toBeLessThanOrEqual(1);
  };
  near(r.sharesBefore, expectedShares(c.before));
  if (!c.after) return;
  near(r.sharesAfter ?? {}, expectedShares(c.after));
  expect(r.moved).not.toBeNull();
  expect(r.moved ?? 1).toBeLessThanOrEqual(c.maxMoved ?? 0);
  expect(r.moved ?? 0).toBeGreaterThanOrEqual(c.minMoved ?? 0);
  if (c.after.length < c.before.length) expect(r.movedFromKeptPools).toBe(0);
}
