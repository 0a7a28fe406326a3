/**
 * Kinds of injected failure: 429 + Retry-After, a 500 in the API's envelope, a 5xx HTML page from
 * the edge, a 404 HTML page from something that is not the API, a hang (no answer until the
 * client gives up), and a 200 bulk answer listing `unsuccessful_keys`.
 */
export type KvFault =
  | "rate-limited"
  | "server-error"
  | "edge-error"
  | "foreign-404"
  | "hang"
  | "unsuccessful-keys";

/** Random failures: `ratio` of requests fail, the kind drawn by `weights`. */
export interface KvFaultOptions {
  readonly ratio: number;
  /** Default: 429, 500, edge 5xx, hang and unsuccessful keys alike (not `foreign-404`). */
  readonly weights?: Partial<Record<KvFault, number>>;
  /** `Retry-After` on injected 429s, in seconds (default 1). */
  readonly retryAfterSeconds?: number;
  /** Send `Retry-After` as an HTTP-date instead of seconds. */
  readonly retryAfterAsDate?: boolean;
}

const DEFAULT_WEIGHTS: Partial<Record<KvFault, number>> = {
  "rate-limited": 1,
  "server-error": 1,
  "edge-error": 1,
  hang: 1,
  "unsuccessful-keys": 1,
};

/** Draws the fault of one request (`unsuccessful-keys` only for bulk writes), or none. */
export function drawFault(
  faults: KvFaultOptions | undefined,
  rand: () => number,
  isBulk: boolean,
): KvFault | undefined {
  if (!faults || faults.ratio <= 0 || rand() >= faults.ratio) return undefined;
  const w = faults.weights ?? DEFAULT_WEIGHTS;
  const kinds = (Object.keys(w) as KvFault[]).filter(
    (k) => (w[k] ?? 0) > 0 && (isBulk || k !== "unsuccessful-keys"),
  );
  const total = kinds.reduce((s, k) => s + (w[k] ?? 0), 0);
  if (total <= 0) return undefined;
  let r = rand() * total;
  for (const k of kinds) {
    r -= w[k] ?? 0;
    if (r < 0) return k;
  }
  return kinds[kinds.length - 1];
}
