/**
 * The Worker's bindings: `Cloudflare.Env`, which `wrangler types` generates from wrangler.toml
 * into worker-configuration.d.ts (`npm run types:worker`; `npm run check:worker` fails when it is
 * stale), plus the optional `DEBUG_TOKEN` secret, which no config names. Vars arrive as strings;
 * `settingsFromEnv` parses them defensively.
 */
export interface Env extends Cloudflare.Env {
  readonly DEBUG_TOKEN?: string;
  /** Secret: signs every origin request (`X-Edge-Signature`); unset: requests go unsigned. */
  readonly ORIGIN_SIGNING_KEY?: string;
  /** Secret: the previous signing key, also signed with while origins move to the new one. */
  readonly ORIGIN_SIGNING_KEY_PREVIOUS?: string;
  /** The cookie whose value keys weighted splits; unset: `CF-Connecting-IP` does. */
  readonly AFFINITY_COOKIE?: string;
  /** Secret: the bearer token of `GET /__edge/observations`; unset: that path is a 404. */
  readonly OBSERVE_TOKEN?: string;
  /** `"off"` turns recording off (docs/reference.md §12). */
  readonly OBSERVE?: string;
  /** Secret: the bearer token of `POST /__edge/purge`; unset: that path is a 404. */
  readonly PURGE_TOKEN?: string;
}

type Holds<T extends true> = T;

/** Compiles only while `[env.production]` binds everything the top level (local dev) binds. */
export type ProductionBindsEverything = Holds<
  Cloudflare.ProductionEnv extends Cloudflare.Env ? true : false
>;
