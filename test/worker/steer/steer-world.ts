import { compile, serializeMap } from "../../../core/index.js";
import type { TestWorker } from "../../../testkit/worker.js";
import { opts, snap } from "../../helpers/snapshot.js";

/** Every pool of the steering tests' world: three inside the `eu` fence, one outside. */
export const STEER_POOLS = ["fra-1", "ams-1", "par-1", "use-1"] as const;

let rev = 100;

/**
 * Compiles and writes a world: fence `eu` over Europe (fra-1, ams-1, par-1), DE on
 * fra-1 > ams-1 > par-1, `_default` on use-1 > par-1, every pool healthy unless `extra` says
 * otherwise, each pool's origin the real one of `origins`.
 */
export async function putSteerWorld(
  worker: TestWorker,
  origins: { get(pool: string): { readonly url: string } },
  extra: Record<string, unknown> = {},
): Promise<void> {
  const kv: Record<string, unknown> = {
    "fence/eu": { continents: ["EU"], regions: ["eu-central", "eu-west"], floor: "par-1" },
    "country/_default": { primary: "use-1", fallbacks: ["par-1"] },
    "country/DE": { primary: "fra-1", fallbacks: ["ams-1", "par-1"] },
    epoch: "1",
    ...extra,
  };
  for (const p of STEER_POOLS) {
    const region = p === "use-1" ? "us-east" : p === "fra-1" ? "eu-central" : "eu-west";
    kv[`pool/${p}`] ??= { origin: origins.get(p).url, region };
    kv[`health/${p}`] ??= { status: "healthy" };
  }
  rev += 1;
  await worker.putMap(serializeMap(compile(snap(kv, rev), opts({ floorPool: "use-1" })).map));
}
