import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { PoolGauge } from "../../pusher/pool-gauge.js";

describe("PoolGauge: one series per pool, made at each scrape", () => {
  it("exposes what read yields at this scrape, in its order, escaped; a pool gone has no series", async () => {
    const registry = new Registry();
    let pools: [string, number][] = [
      ["b", 1],
      ["a", 0.5],
      ['q"\\', 2],
    ];
    new PoolGauge({ name: "t_pool", help: "per pool", registry, read: () => pools });
    expect(await registry.metrics()).toBe(
      '# HELP t_pool per pool\n# TYPE t_pool gauge\nt_pool{pool="b"} 1\nt_pool{pool="a"} 0.5\nt_pool{pool="q\\"\\\\"} 2\n',
    );
    pools = [["a", 3]];
    expect(await registry.metrics()).toBe(
      '# HELP t_pool per pool\n# TYPE t_pool gauge\nt_pool{pool="a"} 3\n',
    );
    const [json] = await registry.getMetricsAsJSON();
    expect(json).toMatchObject({
      name: "t_pool",
      type: "gauge",
      values: [{ value: 3, labels: { pool: "a" } }],
    });
  });
});
