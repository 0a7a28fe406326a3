import type { Failure } from "./responses.js";

/** Documented limits (kv/api/write-key-value-pairs, kv/platform/limits). */
export const MAX_PAIRS = 10_000;
export const MAX_BODY_BYTES = 100 * 1000 * 1000;
const MAX_KEY_BYTES = 512;
const MAX_VALUE_BYTES = 25 * 1024 * 1024;

/** A bulk body checked against the limits: the writes, or the error to answer with. */
export type BulkParse =
  | { readonly ok: true; readonly writes: readonly { key: string; value: string }[] }
  | { readonly ok: false; readonly status: number; readonly failure: Failure };

const bad = (status: number, code: number, message: string): BulkParse => ({
  ok: false,
  status,
  failure: { code, message },
});

/** Parses `[{key, value[, base64]}]` as `PUT …/bulk` takes it. */
export function parseBulkBody(body: Buffer): BulkParse {
  let pairs: unknown;
  try {
    pairs = JSON.parse(body.toString("utf8"));
  } catch {
    return bad(400, 10026, "could not parse request body");
  }
  if (!Array.isArray(pairs)) return bad(400, 10026, "body must be an array");
  if (pairs.length > MAX_PAIRS) return bad(400, 10026, `at most ${MAX_PAIRS} pairs per request`);
  const writes: { key: string; value: string }[] = [];
  for (const p of pairs as unknown[]) {
    const { key, value, base64 } = (p ?? {}) as {
      key?: unknown;
      value?: unknown;
      base64?: unknown;
    };
    if (
      typeof key !== "string" ||
      key === "" ||
      key === "." ||
      key === ".." ||
      Buffer.byteLength(key) > MAX_KEY_BYTES
    ) {
      return bad(400, 10019, "invalid key");
    }
    if (typeof value !== "string") return bad(400, 10026, `value for "${key}" must be a string`);
    const text = base64 === true ? Buffer.from(value, "base64").toString("utf8") : value;
    if (Buffer.byteLength(text) > MAX_VALUE_BYTES) {
      return bad(413, 10011, `value for "${key}" exceeds 25 MiB`);
    }
    writes.push({ key, value: text });
  }
  return { ok: true, writes };
}
