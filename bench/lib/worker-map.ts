import { createLocalSink } from "../../adapters/kv/local-sink.js";
import { type CompiledMap, compile, serializeMap } from "../../core/index.js";
import { type FixtureEntry, scaleFixture } from "./fixture.js";

/**
 * The Worker benches' map: every ISO country with a 4-pool chain over 20 pools, every pool on
 * the one loopback `origin`, compiled from keys under `prefix`; `edit` may change an entry first.
 */
export function workerBenchMap(
  prefix: string,
  origin: string,
  edit: (e: FixtureEntry) => FixtureEntry = (e) => e,
): CompiledMap {
  const entries = scaleFixture({ keys: 0, pools: 20, origin: () => origin }).map(edit);
  return compile(
    { revision: 1, entries: entries.map((e) => ({ key: prefix + e.rel, value: e.value })) },
    { carried: null, prefix, floorPool: "p000", originTemplate: origin, now: new Date() },
  ).map;
}

/** Writes `map` as `routes` into the local KV namespace a workerd under `persistDir` reads. */
export async function seedLocalRoutes(
  persistDir: string,
  namespaceId: string,
  map: CompiledMap,
): Promise<void> {
  const writer = await createLocalSink({ persistDir, namespaceId });
  try {
    await writer.putMany([{ key: "routes", value: serializeMap(map) }]);
  } finally {
    await writer.close();
  }
}
