/** Which steering manifest a player asked for: Apple's HLS or DASH-IF's. */
export type SteerFormat = "hls" | "dash";

/** A pathway that copies the playlist's own (`BASE-ID`) with the pin parameter set to its pool. */
export interface PathwayClone {
  readonly "BASE-ID": string;
  readonly ID: string;
  readonly "URI-REPLACEMENT": { readonly PARAMS: Readonly<Record<string, string>> };
}

/** What one steering manifest says. */
export interface SteeringAnswer {
  readonly ttlS: number;
  /** Relative to the steering URI the player fetched. */
  readonly reloadUri: string;
  readonly priority: readonly string[];
  /** The playlist's pathway, when the player's session names one (HLS only): clones copy it. */
  readonly base: string | null;
  /** The pin parameter (`STEER_PARAM`). */
  readonly param: string;
}

/**
 * The steering manifest (docs/reference.md §15). HLS: `PATHWAY-PRIORITY`, and a
 * `PATHWAY-CLONES` entry per pool of the priority that the playlist did not define, each a copy
 * of the playlist's pathway whose URIs carry the pin parameter. DASH-IF: the same order as
 * `PATHWAY-PRIORITY` (DASH-IF CTS 001 1.0, which dash.js reads) and as
 * `SERVICE-LOCATION-PRIORITY` (the earlier draft's name, which video.js reads); the MPD lists one
 * `BaseURL` per pool itself, so no clones.
 */
export function steeringManifest(format: SteerFormat, a: SteeringAnswer): Record<string, unknown> {
  const head = { VERSION: 1, TTL: a.ttlS, "RELOAD-URI": a.reloadUri };
  if (format === "dash")
    return {
      ...head,
      "PATHWAY-PRIORITY": [...a.priority],
      "SERVICE-LOCATION-PRIORITY": [...a.priority],
    };
  const base = a.base;
  if (base === null) return { ...head, "PATHWAY-PRIORITY": [...a.priority] };
  const clones: PathwayClone[] = a.priority
    .filter((p) => p !== base)
    .map((p) => ({ "BASE-ID": base, ID: p, "URI-REPLACEMENT": { PARAMS: { [a.param]: p } } }));
  return {
    ...head,
    "PATHWAY-PRIORITY": [...a.priority],
    ...(clones.length > 0 ? { "PATHWAY-CLONES": clones } : {}),
  };
}
