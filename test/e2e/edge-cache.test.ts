import { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, eventually, POOLS, type Pool, startE2eStack } from "../helpers/stack.js";

// One real chain: etcd → pusher (local KV) → Worker in workerd (its Cache API) → demo origins,
// whose `/vod/` segments are cacheable and counted. Tests run in order.
let stack: E2eStack;

beforeAll(async () => {
  stack = await startE2eStack({ heartbeatTtl: 5 });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
}, 60_000);

const fetched = () => POOLS.reduce((n, p) => n + (stack.origins.get(p)?.vodServed ?? 0), 0);
const SEGMENTS = Array.from({ length: 5 }, (_, i) => `/vod/asset-1/seg-${i}.ts`);

async function servedBy(country: string, pool: Pool, headers?: Record<string, string>) {
  return eventually(
    async () => {
      const r = await stack.request(country, "/probe", headers);
      return r.headers.get("x-edge-pool") === pool ? r : undefined;
    },
    `${country} served by ${pool}\n${stack.logs().slice(-3000)}`,
  );
}

/** Every segment again for DE: each must be a HIT with its bytes. */
async function segmentsAreHits(headers?: (i: number) => Record<string, string>) {
  for (const [i, path] of SEGMENTS.entries()) {
    const r = await stack.request("DE", path, headers?.(i));
    expect(r.status, path).toBe(200);
    expect(r.body).toBe(`segment ${path}\n`);
    expect(r.headers.get("x-edge-cache"), path).toBe("HIT");
  }
}

describe("end to end: the edge cache keeps one copy per location, whatever the pool", () => {
  it("50 viewers of one segment make one origin fetch", async () => {
    await servedBy("DE", "fra-1");
    const before = fetched();
    const all = await Promise.all(
      Array.from({ length: 50 }, () => stack.request("DE", "/vod/asset-1/first.ts")),
    );
    for (const r of all) expect(r.body).toBe("segment /vod/asset-1/first.ts\n");
    expect(fetched() - before).toBe(1);
  });

  it("after a shed, edgectl boost, a percentage split and a killed origin move DE, cached segments make no origin fetch", async () => {
    for (const path of SEGMENTS) await stack.request("DE", path);
    const warm = fetched();

    // fra-1 turns slow (§9): a checker reports p90 1400 ms against 800/2000, so the pusher
    // sheds half of DE's viewers to ams-1.
    const etcd = new Etcd3({ hosts: stack.etcd.endpoint });
    const poolKey = `${stack.prefix}pool/fra-1`;
    const pool = JSON.parse((await etcd.get(poolKey).string()) ?? "{}");
    const checker = etcd.lease(30);
    try {
      await checker
        .put(`${stack.prefix}health/fra-1/slow`)
        .value(JSON.stringify({ status: "healthy", p90_ms: 1400, samples: 20 }))
        .exec();
      await etcd.put(poolKey).value(JSON.stringify({ ...pool, slow_ms: { low: 800, high: 2000 } }));
      await eventually(
        async () =>
          (await stack.request("DE", "/probe")).headers.get("x-edge-shed") === "fra-1:50"
            ? true
            : undefined,
        `DE shed fra-1:50\n${stack.logs().slice(-3000)}`,
      );
      const shedTo = new Set<string>();
      for (let v = 0; v < 4; v++) {
        for (const path of SEGMENTS) {
          const r = await stack.request("DE", path, {
            "CF-Connecting-IP": `203.0.113.${v * 10 + path.length}`,
          });
          expect(r.headers.get("x-edge-cache"), path).toBe("HIT");
          expect(r.body).toBe(`segment ${path}\n`);
          shedTo.add(r.headers.get("x-edge-pool") ?? "");
        }
      }
      expect(shedTo).toEqual(new Set(["fra-1", "ams-1"]));
      // Without slow_ms the pool stops shedding at once.
      await etcd.put(poolKey).value(JSON.stringify(pool));
      await eventually(
        async () =>
          (await stack.request("DE", "/probe")).headers.has("x-edge-shed") ? undefined : true,
        "DE no longer shed",
      );
    } finally {
      await checker.revoke().catch(() => {});
      etcd.close();
    }
    expect(fetched()).toBe(warm);

    const boost = await stack.edgectl("boost", "DE", "--pool", "ams-1", "--ttl", "5m");
    expect(boost.code, boost.stdout + boost.stderr).toBe(0);
    await servedBy("DE", "ams-1");
    await segmentsAreHits();

    const split = await stack.edgectl(
      "boost",
      "DE",
      "--pool",
      "par-1",
      "--percent",
      "50",
      "--ttl",
      "5m",
    );
    expect(split.code, split.stdout + split.stderr).toBe(0);
    await eventually(
      async () =>
        (await stack.request("DE", "/probe")).headers.get("x-edge-split") ? true : undefined,
      "DE split",
    );
    await segmentsAreHits((i) => ({ "CF-Connecting-IP": `198.51.100.${i + 10}` }));

    // ams-1 and fra-1 die: their heartbeats fail and the pusher moves DE on.
    const unboost = await stack.edgectl("unboost", "DE");
    expect(unboost.code).toBe(0);
    await stack.origins.get("fra-1")?.close();
    await stack.origins.get("ams-1")?.close();
    await servedBy("DE", "par-1");
    await segmentsAreHits();

    expect(fetched()).toBe(warm);
  }, 120_000);
});
