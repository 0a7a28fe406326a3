/**
 * The Worker's bindings (wrangler.toml `[vars]`, the `ROUTING` KV namespace and the
 * `DEBUG_TOKEN` secret). Vars arrive as strings; `settingsFromEnv` parses them defensively.
 */
export interface Env {
  readonly ROUTING: KVNamespace;
  readonly ORIGIN_TEMPLATE?: string;
  readonly FLOOR_POOL?: string;
  readonly KV_CACHE_TTL?: string;
  readonly ISOLATE_CACHE_SECONDS?: string;
  readonly MAX_ATTEMPTS?: string;
  readonly DEBUG_TOKEN?: string;
  /** The cookie whose value keys weighted splits; unset: `CF-Connecting-IP` does. */
  readonly AFFINITY_COOKIE?: string;
}
