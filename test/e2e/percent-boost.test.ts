import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pickWeighted } from "../../core/index.js";
import { DEBUG_TOKEN, type E2eStack, eventually, startE2eStack } from "../helpers/stack.js";

// etcd → pusher (local KV) → Worker in workerd → demo origins, with a percent boost in between.
let stack: E2eStack;

beforeAll(async () => {
  stack = await startE2eStack({ heartbeatTtl: 5 });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
}, 60_000);

const asViewer = (viewer: string) => ({
  "X-Edge-Debug-Token": DEBUG_TOKEN,
  "X-Edge-Debug-Viewer": viewer,
});

describe("end to end: edgectl boost DE --pool ams-1 --percent 30", () => {
  it("sends 27–33 % of 1,000 distinct viewers to ams-1, each viewer always to the same pool", async () => {
    await eventually(
      async () =>
        (await stack.request("DE")).headers.get("x-edge-pool") === "fra-1" ? true : undefined,
      `DE on fra-1\n${stack.logs().slice(-2000)}`,
      30_000,
    );
    const boost = await stack.edgectl(
      "boost",
      "DE",
      "--pool",
      "ams-1",
      "--percent",
      "30",
      "--ttl",
      "10m",
    );
    expect(boost.code, boost.stdout + boost.stderr).toBe(0);
    await eventually(
      async () => {
        const r = await stack.request("DE", "/probe", asViewer("warm-up"));
        return r.headers.get("x-edge-split") === "fra-1:70,ams-1:30" ? true : undefined;
      },
      `DE split 70/30\n${stack.logs().slice(-2000)}`,
      30_000,
    );

    const weights = [
      { pool: "fra-1", weight: 70 },
      { pool: "ams-1", weight: 30 },
    ];
    let onAms = 0;
    for (let i = 0; i < 1000; i++) {
      const viewer = `e2e-viewer-${i}`;
      const r = await stack.request("DE", `/seg/${i}.ts`, asViewer(viewer));
      expect(r.status).toBe(200);
      const pool = r.headers.get("x-edge-pool");
      // Served where the hash says, and really by that origin.
      expect(pool).toBe(pickWeighted(viewer, weights));
      expect((JSON.parse(r.body) as { pool: string }).pool).toBe(pool);
      expect(r.headers.get("x-edge-source")).toBe("override/DE");
      if (pool === "ams-1") onAms++;
    }
    console.log(`e2e percent boost: ${onAms} of 1000 viewers (${onAms / 10} %) served by ams-1`);
    expect(onAms).toBeGreaterThanOrEqual(270);
    expect(onAms).toBeLessThanOrEqual(330);

    for (const viewer of ["e2e-viewer-1", "e2e-viewer-2", "e2e-viewer-3"]) {
      const pools = new Set<string | null>();
      for (let j = 0; j < 30; j++)
        pools.add(
          (await stack.request("DE", "/again", asViewer(viewer))).headers.get("x-edge-pool"),
        );
      expect(pools.size, viewer).toBe(1);
    }

    const un = await stack.edgectl("unboost", "DE");
    expect(un.code, un.stdout + un.stderr).toBe(0);
    const back = await eventually(
      async () => {
        const r = await stack.request("DE", "/probe", asViewer("e2e-viewer-7"));
        return r.headers.get("x-edge-source") === "country/DE" ? r : undefined;
      },
      "DE back on country/DE",
      30_000,
    );
    expect(back.headers.get("x-edge-pool")).toBe("fra-1");
    expect(back.headers.get("x-edge-split")).toBeNull();
  }, 180_000);
});
