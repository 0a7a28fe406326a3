import {
  type Observed,
  ObservedSchema,
  parseBoundedJson,
  parseKey,
  type SnapshotEntry,
} from "../core/index.js";

/** What one country's viewers of one pool get, as `observed/{CC}/{pool}` says. */
export interface ObservedPair extends Observed {
  readonly country: string;
  readonly pool: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The valid `observed/{CC}/{pool}` values of the prefix (docs/reference.md §12), kept beside the
 * routing index as the prefix mirror reads keys: a key of another family costs one prefix check.
 * An invalid value is left out (the compile names it as a problem).
 */
export class ObservedMap {
  private readonly byKey = new Map<string, ObservedPair>();
  private readonly under: string;

  constructor(private readonly prefix: string) {
    this.under = `${prefix}observed/`;
  }

  /** Sets one key to its value (a key outside `observed/` is ignored). */
  upsert(entry: SnapshotEntry): void {
    if (!entry.key.startsWith(this.under)) return;
    const parsed = parseKey(entry.key.slice(this.prefix.length));
    const value = parsed.kind === "observed" ? decode(entry.value) : null;
    if (parsed.kind === "observed" && value)
      this.byKey.set(entry.key, { country: parsed.cc, pool: parsed.pool, ...value });
    else this.byKey.delete(entry.key);
  }

  /** Removes one key. */
  delete(key: string): void {
    this.byKey.delete(key);
  }

  /** Every (country, pool) with a valid observation. */
  pairs(): IterableIterator<ObservedPair> {
    return this.byKey.values();
  }
}

function decode(value: string | Uint8Array): Observed | null {
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
