/**
 * Aggregator objects: each flush goes to one picked at random, so no single object takes all of
 * a large deployment's flushes; a read merges them all. Changing it strands what the dropped
 * shards hold (15 minutes at most).
 */
export const OBSERVE_SHARDS = 8;

/** What the recorder and the endpoint use of an aggregator's stub. */
export interface AggregatorStub {
  fetch(input: string, init?: RequestInit): Promise<Response>;
}

/** What they use of the `OBSERVATIONS` Durable Object namespace. */
export interface AggregatorNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): AggregatorStub;
}

/** The binding of the aggregator, if the deployment has one. */
export interface AggregatorBinding {
  readonly OBSERVATIONS?: AggregatorNamespace;
}

/** The stub of shard `i`. */
export function shardStub(ns: AggregatorNamespace, i: number): AggregatorStub {
  return ns.get(ns.idFromName(`observations-${i}`));
}
