import { pickWeighted, type RouteWeight } from "../../core/index.js";

/** How a case's synthetic viewer keys look: as the Worker's viewer keys would. */
export type KeyKind = "viewer" | "ipv4" | "ipv6" | "cookie";

/** One row of the weighted-rendezvous table: a split, optionally a second one, 100,000 keys. */
export interface SplitCase {
  readonly name: string;
  readonly keys: KeyKind;
  readonly count: number;
  readonly before: readonly RouteWeight[];
  /** The split after a change (weights moved, a pool removed); absent for share-only cases. */
  readonly after?: readonly RouteWeight[];
  /** Largest fraction of viewers that may change pool between `before` and `after`. */
  readonly maxMoved?: number;
  /** Smallest fraction that must move (the share that changed hands cannot move for free). */
  readonly minMoved?: number;
}

/** What evaluating a case measured; Node and workerd must agree on every field. */
export interface SplitResult {
  readonly name: string;
  /** Share of viewers per pool, in percent, for `before` (and `after`). */
  readonly sharesBefore: Readonly<Record<string, number>>;
  readonly sharesAfter: Readonly<Record<string, number>> | null;
  /** Fraction of viewers whose pool changed between `before` and `after`. */
  readonly moved: number | null;
  /** Viewers that moved although their `before` pool is still in `after`. */
  readonly movedFromKeptPools: number | null;
  /** Keys that got another pool when asked again. */
  readonly unstable: number;
  /** A 32-bit digest of every pick, to compare runtimes bit for bit. */
  readonly digest: number;
}

const w = (pool: string, weight: number): RouteWeight => ({ pool, weight });
const N = 100_000;

/** The table: shares, weight changes, pool removal and stability over 100,000 keys each. */
export const SPLIT_CASES: readonly SplitCase[] = [
  { name: "80/20 shares", keys: "viewer", count: N, before: [w("fra-1", 80), w("ams-1", 20)] },
  {
    name: "80/20 shares over IPv4 keys",
    keys: "ipv4",
    count: N,
    before: [w("fra-1", 80), w("ams-1", 20)],
  },
  {
    name: "50/30/20 shares over IPv6 keys",
    keys: "ipv6",
    count: N,
    before: [w("fra-1", 50), w("ams-1", 30), w("par-1", 20)],
  },
  {
    name: "1/1/1 shares over cookie keys",
    keys: "cookie",
    count: N,
    before: [w("fra-1", 1), w("ams-1", 1), w("par-1", 1)],
  },
  { name: "999/1 shares", keys: "viewer", count: N, before: [w("fra-1", 999), w("ams-1", 1)] },
  {
    name: "80/20 → 70/30 moves about a tenth",
    keys: "viewer",
    count: N,
    before: [w("fra-1", 80), w("ams-1", 20)],
    after: [w("fra-1", 70), w("ams-1", 30)],
    maxMoved: 0.11,
    minMoved: 0.09,
  },
  {
    name: "80/20 → 70/30 over IPv4 keys",
    keys: "ipv4",
    count: N,
    before: [w("fra-1", 80), w("ams-1", 20)],
    after: [w("fra-1", 70), w("ams-1", 30)],
    maxMoved: 0.11,
    minMoved: 0.09,
  },
  {
    name: "removing one pool of three moves only its viewers",
    keys: "viewer",
    count: N,
    before: [w("fra-1", 50), w("ams-1", 30), w("par-1", 20)],
    after: [w("fra-1", 50), w("par-1", 20)],
    maxMoved: 0.31,
    minMoved: 0.29,
  },
  {
    name: "removing the primary of three over IPv6 keys",
    keys: "ipv6",
    count: N,
    before: [w("fra-1", 40), w("ams-1", 40), w("par-1", 20)],
    after: [w("ams-1", 40), w("par-1", 20)],
    maxMoved: 0.41,
    minMoved: 0.39,
  },
];

/** The `i`-th synthetic key of a kind (deterministic, the same in every runtime). */
export function syntheticKey(kind: KeyKind, i: number): string {
  switch (kind) {
    case "viewer":
      return `viewer-${i}`;
    case "ipv4":
      return `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;
    case "ipv6":
      return `2001:db8:${(i >>> 16).toString(16)}::${(i & 0xffff).toString(16)}`;
    case "cookie": {
      // A session id as a login service would hand out: 32 hex digits.
      let x = (i + 1) * 0x9e3779b1;
      let out = "";
      for (let j = 0; j < 4; j++) {
        x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) ^ j;
        out += (x >>> 0).toString(16).padStart(8, "0");
      }
      return out;
    }
  }
}

function shares(picks: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const p of picks) counts[p] = (counts[p] ?? 0) + 1;
  const out: Record<string, number> = {};
  for (const [p, n] of Object.entries(counts)) out[p] = (n * 100) / picks.length;
  return out;
}

function pickAll(c: SplitCase, weights: readonly RouteWeight[]): string[] {
  const picks: string[] = [];
  for (let i = 0; i < c.count; i++)
    picks.push(pickWeighted(syntheticKey(c.keys, i), weights) ?? "");
  return picks;
}

/** Runs one case: pure, synchronous, used as is by the Node tests and inside workerd. */
export function evaluateSplitCase(c: SplitCase): SplitResult {
  const before = pickAll(c, c.before);
  const again = pickAll(c, c.before);
  let unstable = 0;
  let digest = 0x811c9dc5;
  const index = new Map(c.before.map((x, i) => [x.pool, i]));
  for (let i = 0; i < before.length; i++) {
    if (before[i] !== again[i]) unstable++;
    digest = Math.imul(digest ^ (index.get(before[i] ?? "") ?? 255), 0x01000193) >>> 0;
  }
  if (!c.after) {
    return {
      name: c.name,
      sharesBefore: shares(before),
      sharesAfter: null,
      moved: null,
      movedFromKeptPools: null,
      unstable,
      digest,
    };
  }
  const after = pickAll(c, c.after);
  const kept = new Set(c.after.map((x) => x.pool));
  let moved = 0;
  let fromKept = 0;
  for (let i = 0; i < before.length; i++) {
    if (before[i] === after[i]) continue;
    moved++;
    // Weights changing on kept pools do move viewers; only removals must not touch the others.
    if (kept.has(before[i] ?? "") && c.after.length < c.before.length) fromKept++;
  }
  return {
    name: c.name,
    sharesBefore: shares(before),
    sharesAfter: shares(after),
    moved: moved / c.count,
    movedFromKeptPools: fromKept,
    unstable,
    digest,
  };
}

/** A split's shares in percent, as the weights say they should be. */
export function expectedShares(weights: readonly RouteWeight[]): Record<string, number> {
  const total = weights.reduce((s, x) => s + x.weight, 0);
  const out: Record<string, number> = {};
  for (const x of weights) out[x.pool] = (x.weight * 100) / total;
  return out;
}
