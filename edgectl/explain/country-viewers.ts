import {
  type Observed,
  ObservedSchema,
  parseBoundedJson,
  parseKey,
  type Snapshot,
} from "../../core/index.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** An `observed/` value decoded as the compiler decodes it, or null when it is not one. */
function observedValue(value: string | Uint8Array): Observed | null {
  let text: string;
  try {
    text = typeof value === "string" ? value : utf8.decode(value);
  } catch {
    return null;
  }
  const json = parseBoundedJson(text);
  if (!json.ok) return null;
  const parsed = ObservedSchema.safeParse(json.value);
  return parsed.success ? parsed.data : null;
}

/** What a country's viewers of one pool get (`observed/{CC}/{pool}`, docs/reference.md §12). */
export interface PoolViewers extends Observed {
  readonly pool: string;
  /** The pool's checkers' p90 (its `health/` keys), beside the viewers'; null without one. */
  readonly checkers_p90_ms: number | null;
}

/**
 * The `observed/{cc}/*` keys of the snapshot, by pool: what the observer last wrote of the
 * country's viewers, beside what the pool's checkers say. Values that do not decode are left out
 * (the compile names them as problems).
 */
export function countryViewers(
  snapshot: Snapshot,
  prefix: string,
  cc: string,
  health: ReadonlyMap<string, { readonly p90_ms?: number | undefined }>,
): PoolViewers[] {
  const under = `${prefix}observed/${cc}/`;
  const out: PoolViewers[] = [];
  for (const e of snapshot.entries) {
    if (!e.key.startsWith(under)) continue;
    const parsed = parseKey(e.key.slice(prefix.length));
    if (parsed.kind !== "observed") continue;
    const o = observedValue(e.value);
    if (!o) continue;
    out.push({
      pool: parsed.pool,
      p90_ms: o.p90_ms,
      samples: o.samples,
      error_ratio: o.error_ratio,
      checkers_p90_ms: health.get(parsed.pool)?.p90_ms ?? null,
    });
  }
  return out.sort((a, b) => (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0));
}
