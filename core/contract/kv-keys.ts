/** The Workers KV key holding the compiled map (docs/reference.md §3). */
export const ROUTES_KEY = "routes";

/** The Workers KV key holding the dead-man's switch: what `routes` was last confirmed against. */
export const META_KEY = "meta";
