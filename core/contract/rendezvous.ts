import type { RouteWeight } from "./compiled-map.js";

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a (32-bit) over UTF-16 code units, continuing from `h`. */
function fnv1a(h: number, text: string): number {
  let x = h;
  for (let i = 0; i < text.length; i++) {
    x ^= text.charCodeAt(i);
    x = Math.imul(x, FNV_PRIME);
  }
  return x;
}

/** MurmurHash3's 32-bit finalizer: FNV-1a alone mixes its last characters poorly. */
function fmix32(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/**
 * The hash of a (viewer, pool) pair as a number in (0, 1): FNV-1a over `key`, a NUL separator and
 * `pool`, then MurmurHash3's finalizer. Synchronous integer arithmetic on UTF-16 code units, so
 * Node and workerd compute the same value bit for bit (Web Crypto digests are async, and the
 * split sits on every request's path).
 */
export function viewerPoolHash01(key: string, pool: string): number {
  return hash01From(fnv1a(FNV_OFFSET, key), pool);
}

/** The pool's hash01, from the FNV state after the key (shared by every pool of one pick). */
function hash01From(seeded: number, pool: string): number {
  return (fmix32(fnv1a(seeded, `\u0000${pool}`)) + 0.5) / 4294967296;
}

/**
 * Weighted rendezvous (highest random weight) hashing: every pool scores
 * `-weight / ln(hash01(key, pool))` and the highest score wins. Pool `i` wins with probability
 * `weight_i / Σ weight`; changing one weight moves only the viewers that must move (80/20 → 70/30
 * moves a tenth), and removing a pool moves only that pool's viewers. Ties go to the earlier
 * pool. `undefined` when no pool has a positive weight.
 */
export function pickWeighted(key: string, weights: readonly RouteWeight[]): string | undefined {
  let best: string | undefined;
  let bestScore = 0;
  const seeded = fnv1a(FNV_OFFSET, key);
  for (const { pool, weight } of weights) {
    if (!(weight > 0)) continue;
    const score = -weight / Math.log(hash01From(seeded, pool));
    if (best === undefined || score > bestScore) {
      best = pool;
      bestScore = score;
    }
  }
  return best;
}
