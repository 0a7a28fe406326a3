import type { KvEntry } from "./kv-sink.js";

/** Documented bulk-write limits: 10,000 pairs and 100 MB per request. */
export const MAX_BULK_PAIRS = 10_000;
export const MAX_BULK_BYTES = 100 * 1000 * 1000;

// Leave room for the JSON envelope and escaping the byte estimate does not see.
const BULK_BYTES_MARGIN = 1_000_000;

/** Splits entries into request-sized chunks (pair count and serialized bytes). */
export function chunkEntries(
  entries: readonly KvEntry[],
  maxPairs = MAX_BULK_PAIRS,
  maxBytes = MAX_BULK_BYTES - BULK_BYTES_MARGIN,
): KvEntry[][] {
  const chunks: KvEntry[][] = [];
  let cur: KvEntry[] = [];
  let bytes = 2;
  for (const e of entries) {
    const size = Buffer.byteLength(JSON.stringify({ key: e.key, value: e.value })) + 1;
    if (cur.length > 0 && (cur.length >= maxPairs || bytes + size > maxBytes)) {
      chunks.push(cur);
      cur = [];
      bytes = 2;
    }
    cur.push(e);
    bytes += size;
  }
  if (cur.length > 0) chunks.push(cur);
  return chunks;
}
