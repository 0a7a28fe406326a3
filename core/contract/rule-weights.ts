import type { KeptRule, RouteWeight } from "./compiled-map.js";

/**
 * A rule's pools that carry a positive weight, in chain order (primary, then fallbacks). A pool
 * the weights leave out, or give 0, is not part of the split.
 */
export function positiveWeights(rule: KeptRule): RouteWeight[] {
  const w = rule.weights;
  if (!w) return [];
  const out: RouteWeight[] = [];
  for (const pool of [rule.primary, ...rule.fallbacks]) {
    const weight = Object.hasOwn(w, pool) ? w[pool] : undefined;
    if (weight !== undefined && weight > 0) out.push({ pool, weight });
  }
  return out;
}

/** Route weights back as a rule's `weights` record. */
export function weightsOf(weights: readonly RouteWeight[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const w of weights) out[w.pool] = w.weight;
  return out;
}

/**
 * Integer percentages of a split that add up to 100 (largest remainder; ties to the earlier
 * pool), e.g. 80/20 → `[80, 20]`, 1/1/1 → `[34, 33, 33]`.
 */
export function percentShares(weights: readonly RouteWeight[]): number[] {
  const total = weights.reduce((s, w) => s + w.weight, 0);
  if (total <= 0) return weights.map(() => 0);
  const exact = weights.map((w) => (w.weight * 100) / total);
  const floors = exact.map(Math.floor);
  let left = 100 - floors.reduce((s, x) => s + x, 0);
  const order = exact
    .map((x, i) => ({ i, r: x - Math.floor(x) }))
    .sort((a, b) => b.r - a.r || a.i - b.i);
  for (const { i } of order) {
    if (left <= 0) break;
    floors[i] = (floors[i] ?? 0) + 1;
    left -= 1;
  }
  return floors;
}

/** `fra-1:80,ams-1:20`: the split in percent, as `X-Edge-Split` and the CLI show it. */
export function formatSplit(weights: readonly RouteWeight[]): string {
  const shares = percentShares(weights);
  return weights.map((w, i) => `${w.pool}:${shares[i] ?? 0}`).join(",");
}
