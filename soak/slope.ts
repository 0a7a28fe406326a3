/** A least-squares line through a figure's samples, with the 95 % interval of its slope. */
export interface SlopeFit {
  readonly n: number;
  /** Units of y per second. */
  readonly slope: number;
  readonly intercept: number;
  /** Standard error of the slope (0 for a perfect fit). */
  readonly stderr: number;
  /** 95 % confidence interval of the slope (Student's t, n − 2 degrees of freedom). */
  readonly ci95: readonly [number, number];
  /** Seconds from the first to the last sample. */
  readonly spanSeconds: number;
  /** slope × span: what the line gains over the window, in units of y. */
  readonly rise: number;
  /** Highest minus lowest sample. */
  readonly range: number;
}

/** Two-sided 97.5 % quantiles of Student's t for 1–10 degrees of freedom. */
const T975_SMALL = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];

/**
 * The 97.5 % quantile of Student's t with `df` degrees of freedom: a table up to 10, beyond it the
 * Cornish–Fisher expansion around the normal quantile (Abramowitz & Stegun 26.7.5), within 0.002
 * of the exact value from df = 11.
 */
export function tQuantile975(df: number): number {
  if (df < 1) return Number.POSITIVE_INFINITY;
  const small = T975_SMALL[Math.floor(df) - 1];
  if (small !== undefined) return small;
  const z = 1.959964;
  const z3 = z ** 3;
  const z5 = z ** 5;
  const z7 = z ** 7;
  return (
    z +
    (z3 + z) / (4 * df) +
    (5 * z5 + 16 * z3 + 3 * z) / (96 * df ** 2) +
    (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df ** 3)
  );
}

/** Fits y = intercept + slope·x (x in seconds); null with fewer than 3 points or one x. */
export function fitSlope(points: ReadonlyArray<{ readonly x: number; readonly y: number }>) {
  const n = points.length;
  if (n < 3) return null;
  let sx = 0;
  let sy = 0;
  for (const p of points) {
    sx += p.x;
    sy += p.y;
  }
  const mx = sx / n;
  const my = sy / n;
  let sxx = 0;
  let sxy = 0;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  let xMin = Number.POSITIVE_INFINITY;
  let xMax = Number.NEGATIVE_INFINITY;
  for (const p of points) {
    sxx += (p.x - mx) ** 2;
    sxy += (p.x - mx) * (p.y - my);
    lo = Math.min(lo, p.y);
    hi = Math.max(hi, p.y);
    xMin = Math.min(xMin, p.x);
    xMax = Math.max(xMax, p.x);
  }
  if (sxx === 0) return null;
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  let sse = 0;
  for (const p of points) sse += (p.y - intercept - slope * p.x) ** 2;
  const stderr = Math.sqrt(sse / (n - 2) / sxx);
  const half = tQuantile975(n - 2) * stderr;
  const fit: SlopeFit = {
    n,
    slope,
    intercept,
    stderr,
    ci95: [slope - half, slope + half],
    spanSeconds: xMax - xMin,
    rise: slope * (xMax - xMin),
    range: hi - lo,
  };
  return fit;
}
