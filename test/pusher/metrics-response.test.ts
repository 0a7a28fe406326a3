import { createServer, get, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { writeMetrics } from "../../pusher/metrics-response.js";
import { PoolGauge } from "../../pusher/pool-gauge.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** A loopback server answering every request with `writeMetrics(registry)`. */
async function serve(registry: Registry, answers: Array<Promise<void>> = []): Promise<string> {
  const server = createServer((_req, res) => {
    answers.push(
      writeMetrics(registry, res, () => {
        res
          .writeHead(500, { "content-type": "application/json" })
          .end('{"error":"metrics unavailable"}');
      }),
    );
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
}

/** A registry like the pusher's: a counter, a labelled gauge, a histogram and a per-pool gauge. */
function registryOf(pools: number): Registry {
  const registry = new Registry();
  new Counter({ name: "t_pushes_total", help: "pushes", registers: [registry] }).inc(3);
  const g = new Gauge({
    name: "t_problems",
    help: 'with "quotes"\\',
    labelNames: ["code"],
    registers: [registry],
  });
  g.set({ code: "invalid-json" }, 2);
  g.set({ code: 'we"ird\\\n' }, 1);
  new Histogram({
    name: "t_seconds",
    help: "durations",
    buckets: [0.1, 1],
    registers: [registry],
  }).observe(0.5);
  new PoolGauge({
    name: "t_pool_p90_ms",
    help: "per pool",
    registry,
    read: function* () {
      for (let i = 0; i < pools; i++) yield [`g${String(i).padStart(5, "0")}`, i];
    },
  });
  return registry;
}

describe("writeMetrics", () => {
  it("answers the same bytes as the registry's whole text, metric by metric", async () => {
    for (const pools of [0, 3, 50_000]) {
      const registry = registryOf(pools);
      const res = await fetch(await serve(registry));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(registry.contentType);
      const text = await res.text();
      expect(text).toBe(await registry.metrics());
      if (pools === 50_000) expect(text).toContain('t_pool_p90_ms{pool="g49999"} 49999\n');
    }
  });

  it("answers an empty registry as the registry does", async () => {
    const registry = new Registry();
    const res = await fetch(await serve(registry));
    expect(await res.text()).toBe(await registry.metrics());
  });

  it("gives the error answer when the first metric fails, and cuts the response when a later one does", async () => {
    const failing = (name: string, registry: Registry) =>
      new Gauge({
        name,
        help: "fails",
        registers: [registry],
        collect() {
          throw new Error("collect failed");
        },
      });
    const first = new Registry();
    failing("t_first", first);
    new Counter({ name: "t_after", help: "after", registers: [first] });
    const res = await fetch(await serve(first));
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: "metrics unavailable" });

    const later = registryOf(3);
    failing("t_later", later);
    // Cut after its 200 went out or before: either way the scraper sees a failed scrape.
    const url = await serve(later);
    await expect(fetch(url).then((r) => r.text())).rejects.toThrow();
  });

  it("stops rendering for a scraper that hangs up mid-answer", async () => {
    const registry = new Registry();
    new PoolGauge({
      name: "t_big",
      help: "far more than the socket buffers",
      registry,
      read: function* () {
        for (let i = 0; i < 300_000; i++) yield [`pool-${i}`, i];
      },
    });
    let collected = 0;
    new Gauge({
      name: "t_after",
      help: "after the big one",
      registers: [registry],
      collect() {
        collected += 1;
      },
    });
    const answers: Array<Promise<void>> = [];
    const url = new URL(await serve(registry, answers));
    await new Promise<void>((resolve, reject) => {
      const req = get(url, (res) => {
        res.once("data", () => {
          req.destroy();
          resolve();
        });
      });
      req.on("error", () => {});
      req.on("close", resolve);
      setTimeout(() => reject(new Error("no answer")), 10_000).unref();
    });
    await Promise.all(answers);
    expect(answers).toHaveLength(1);
    expect(collected).toBe(0);
  });
});
