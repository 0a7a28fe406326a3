/**
 * Categorical colours chosen for a dark background: distinguishable from one another and from
 * the degraded mark (red), the "no code" grey and the ocean.
 */
export const POOL_COLOURS: readonly string[] = [
  "#e8d85c",
  "#d6946a",
  "#38c5cc",
  "#8290f5",
  "#4cbb7f",
  "#ea77b0",
  "#4c9be8",
  "#f0a23b",
  "#a884ea",
  "#c2d052",
];

/** The map's land background: muted shades are mixed toward it. */
const MUTE_TOWARD = [0x1a, 0x21, 0x2b] as const;
/** Share of the pool's own colour in its muted shade. */
const MUTE_KEEP = 0.4;

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** A pool's colour and the muted shade used for countries that are on `_default`. */
export interface PoolColour {
  readonly colour: string;
  readonly muted: string;
}

/** Mixes `#rrggbb` toward the land colour. */
export function mute(hex: string): string {
  const n = Number.parseInt(hex.slice(1), 16);
  const rgb = [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  const out = rgb.map((c, i) =>
    Math.round(c * MUTE_KEEP + (MUTE_TOWARD[i] ?? 0) * (1 - MUTE_KEEP)),
  );
  return `#${out.map((c) => c.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * Colours for a set of pools. Each pool starts at the slot its name hashes to and takes the next
 * free one on a collision (pools in name order): the same set of pools always gets the same
 * colours (across reloads, pushers and health changes), distinct up to ten pools, and a new pool
 * moves only pools whose slots collide with it.
 */
export function assignColours(pools: readonly string[]): Map<string, PoolColour> {
  const out = new Map<string, PoolColour>();
  let taken = new Set<number>();
  for (const name of [...pools].sort()) {
    if (taken.size >= POOL_COLOURS.length) taken = new Set();
    let slot = fnv1a(name) % POOL_COLOURS.length;
    while (taken.has(slot)) slot = (slot + 1) % POOL_COLOURS.length;
    taken.add(slot);
    const colour = POOL_COLOURS[slot] ?? "#888888";
    out.set(name, { colour, muted: mute(colour) });
  }
  return out;
}
