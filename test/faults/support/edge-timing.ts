import { ORIGIN_MS_HEADER } from "../../../testkit/origins.js";
import type { EdgeResponse } from "../../../testkit/worker.js";

/** One answer, timed by the client, with the origin's own time taken out. */
export interface Timed {
  readonly start: number;
  readonly end: number;
  /** Edge time minus origin time, ms. */
  readonly excess: number;
  readonly rev: number;
  readonly degraded: string | null;
  readonly status: number;
}

/** Times one answer that started at `start` (performance.now()). */
export function timed(res: EdgeResponse, start: number): Timed {
  const origin = Number(res.headers.get(ORIGIN_MS_HEADER) ?? "0");
  return {
    start,
    end: start + res.elapsedMs,
    excess: res.elapsedMs - (Number.isFinite(origin) ? origin : 0),
    rev: Number(res.headers.get("x-edge-revision") ?? "0"),
    degraded: res.headers.get("x-edge-degraded"),
    status: res.status,
  };
}

/** A client gives up after this; such an answer counts as waiting that long, status 0. */
export const CLIENT_TIMEOUT_MS = 5_000;

/** The answer, or a timed-out one after `CLIENT_TIMEOUT_MS` (the request is left to finish). */
export async function bounded(pending: Promise<EdgeResponse>, start: number): Promise<Timed> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<Timed>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          start,
          end: start + CLIENT_TIMEOUT_MS,
          excess: CLIENT_TIMEOUT_MS,
          rev: -1,
          degraded: null,
          status: 0,
        }),
      CLIENT_TIMEOUT_MS,
    );
  });
  const answered = pending.then(
    (res) => timed(res, start),
    (): Timed => ({ start, end: performance.now(), excess: 0, rev: -1, degraded: null, status: 0 }),
  );
  try {
    return await Promise.race([answered, gaveUp]);
  } finally {
    clearTimeout(timer);
  }
}

/** The nearest-rank percentile `p` (0–100) of `xs`; 0 for none. */
export const pct = (xs: readonly number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0;
};
