import { setTimeout as sleep } from "node:timers/promises";
import type { ObservationRow, ObservationsBody } from "../../core/index.js";
import type { TestWorker } from "../../testkit/worker.js";

/** Reads `/__edge/observations` with `token` until `done` holds (flushes land after responses). */
export async function observationsWhen(
  worker: TestWorker,
  token: string,
  done: (body: ObservationsBody) => boolean,
  query = "",
): Promise<ObservationsBody> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await worker.dispatch(`/__edge/observations${query}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    if (res.status !== 200) throw new Error(`observations answered ${res.status}: ${res.body}`);
    const body = res.json<ObservationsBody>();
    if (done(body)) return body;
    if (Date.now() > deadline) throw new Error(`observations never matched: ${res.body}`);
    await sleep(20);
  }
}

/** The row of (country, pool), if any. */
export function rowOf(
  body: ObservationsBody,
  country: string,
  pool: string,
): ObservationRow | undefined {
  return body.rows.find((r) => r.country === country && r.pool === pool);
}

/** Requests in all rows. */
export function totalRequests(body: ObservationsBody): number {
  return body.rows.reduce((n, r) => n + r.requests, 0);
}
