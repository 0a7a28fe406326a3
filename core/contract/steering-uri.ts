import type { SteerFormat } from "./steering-manifest.js";

/** The steering URI's query parameter that carries the session's base pathway. */
export const SESSION_BASE_PARAM = "base";

/** The steering endpoint's path for `format`. */
export function steeringPath(format: SteerFormat): string {
  return `/__edge/steer/${format}`;
}

/**
 * The steering URI a playlist names and a manifest reloads (`SERVER-URI`, `RELOAD-URI`): the
 * endpoint, carrying the session's state, which is the pathway its playlist defined (`base`, the
 * one clones copy). Players add their own report (`_HLS_pathway`, …) to it.
 */
export function steeringUri(format: SteerFormat, base: string | null): string {
  const path = steeringPath(format);
  return base === null ? path : `${path}?${SESSION_BASE_PARAM}=${encodeURIComponent(base)}`;
}
