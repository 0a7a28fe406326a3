import { describe, expect, it } from "vitest";
import { fitSlope, tQuantile975 } from "../../soak/slope.js";

describe("least-squares slope with its 95 % interval", () => {
  it("recovers a line exactly, with a zero-width interval", () => {
    const fit = fitSlope([0, 10, 20, 30].map((x) => ({ x, y: 5 + 0.5 * x })));
    expect(fit?.slope).toBeCloseTo(0.5, 12);
    expect(fit?.intercept).toBeCloseTo(5, 12);
    expect(fit?.ci95[0]).toBeCloseTo(0.5, 12);
    expect(fit?.ci95[1]).toBeCloseTo(0.5, 12);
    expect(fit?.rise).toBeCloseTo(15, 12);
    expect(fit?.spanSeconds).toBe(30);
    expect(fit?.range).toBeCloseTo(15, 12);
  });

  it("matches a textbook fit: slope, standard error and t interval", () => {
    // y = 1, 3, 2, 5, 4 at x = 1..5: slope 0.8, intercept 0.6, SSE 3.6, Sxx 10.
    const fit = fitSlope([1, 3, 2, 5, 4].map((y, i) => ({ x: i + 1, y })));
    expect(fit?.slope).toBeCloseTo(0.8, 12);
    expect(fit?.intercept).toBeCloseTo(0.6, 12);
    const se = Math.sqrt(3.6 / 3 / 10);
    expect(fit?.stderr).toBeCloseTo(se, 12);
    expect(fit?.ci95[0]).toBeCloseTo(0.8 - 3.182 * se, 9);
    expect(fit?.ci95[1]).toBeCloseTo(0.8 + 3.182 * se, 9);
  });

  it("refuses fewer than 3 points or a single x", () => {
    expect(
      fitSlope([
        { x: 0, y: 1 },
        { x: 1, y: 2 },
      ]),
    ).toBeNull();
    expect(
      fitSlope([
        { x: 1, y: 1 },
        { x: 1, y: 2 },
        { x: 1, y: 3 },
      ]),
    ).toBeNull();
  });

  it("t quantiles: the table, then within 0.002 of the exact values", () => {
    expect(tQuantile975(1)).toBe(12.706);
    expect(tQuantile975(10)).toBe(2.228);
    // Exact 97.5 % quantiles (R: qt(0.975, df)).
    for (const [df, exact] of [
      [11, 2.200985],
      [13, 2.160369],
      [20, 2.085963],
      [30, 2.042272],
      [60, 2.000298],
      [178, 1.973381],
    ] as const) {
      expect(Math.abs(tQuantile975(df) - exact)).toBeLessThan(0.002);
    }
  });
});
