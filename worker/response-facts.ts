/**
 * What the edge wrote in a proxied response's `X-Edge-Pool`, `X-Edge-Country`, `X-Edge-Canary`,
 * `X-Edge-Failover` and `X-Edge-Cache`, kept beside the response as it is written: recording
 * (§12) reads these instead of reading the five headers back, which cost a fifth of its CPU.
 * A response without facts (the edge's own refusals, a steered playlist's copy) is read from its
 * headers; both give the same outcome (test/worker/observe/viewer-outcome.test.ts).
 */
export interface ResponseFacts {
  readonly pool: string;
  readonly country: string;
  /** `X-Edge-Canary`, or `""` when no canary changes the route. */
  readonly side: string;
  readonly failover: boolean;
  /** `X-Edge-Cache`. */
  readonly cache: string;
}

const kept = new WeakMap<Response, ResponseFacts>();

/** Keeps `facts` beside `response`, whose headers say the same. */
export function keepFacts(response: Response, facts: ResponseFacts): void {
  kept.set(response, facts);
}

/** The facts kept beside `response`, if any. */
export function factsOf(response: Response): ResponseFacts | undefined {
  return kept.get(response);
}
