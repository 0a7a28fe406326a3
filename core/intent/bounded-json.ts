import { MAX_VALUE_BYTES } from "./schema.js";

/**
 * Deepest nesting of arrays and objects that etcd text is parsed into a structure with: every
 * valid value nests 3 levels at most, and `JSON.stringify` or a recursive walk of a value nested
 * some thousands of levels deep exhausts the stack.
 */
export const MAX_JSON_DEPTH = 64;

/** How far JSON text may go before it is read as a structure. */
export interface JsonBounds {
  /** Most characters (default `MAX_VALUE_BYTES`: no valid value is longer). */
  readonly maxChars?: number;
  /** Most levels of nested arrays and objects (default {@link MAX_JSON_DEPTH}). */
  readonly maxDepth?: number;
}

/** JSON text read within its bounds, or why it was not read. */
export type BoundedJson =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: "too-large" | "too-deep" | "invalid-json" };

/**
 * True when `text` nests arrays and objects more than `maxDepth` levels deep (brackets inside
 * strings do not count). Stops at the first level too deep, so a hostile value costs one pass at
 * most.
 */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) depth -= 1;
  }
  return false;
}

/**
 * `JSON.parse(text)` when `text` is within `bounds`, so what comes back can be walked, printed
 * and stringified again whatever etcd held; otherwise the reason it was left as text.
 */
export function parseBoundedJson(text: string, bounds: JsonBounds = {}): BoundedJson {
  if (text.length > (bounds.maxChars ?? MAX_VALUE_BYTES)) return { ok: false, reason: "too-large" };
  if (nestsDeeperThan(text, bounds.maxDepth ?? MAX_JSON_DEPTH))
    return { ok: false, reason: "too-deep" };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, reason: "invalid-json" };
  }
}
