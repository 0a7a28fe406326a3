import { Counter, Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MetricsListener, startMetricsListener } from "../../heartbeat/metrics-listener.js";

describe("startMetricsListener", () => {
  const registry = new Registry();
  let listener: MetricsListener;
  let scrapes = 0;
  const url = (path: string) => `http://127.0.0.1:${listener.port}${path}`;

  beforeAll(async () => {
    new Counter({ name: "x_total", help: "x", registers: [registry] }).inc(3);
    listener = await startMetricsListener({
      host: "127.0.0.1",
      port: 0,
      registry,
      documents: { "/status": () => ({ ok: true }) },
      scraped: () => {
        scrapes++;
      },
    });
  });
  afterAll(() => listener?.close());

  it("serves the registry on /metrics and a document on its path; anything else is 404, any other method 405", async () => {
    const metrics = await fetch(url("/metrics"));
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain("x_total 3");
    expect(await (await fetch(url("/status"))).json()).toEqual({ ok: true });
    expect((await fetch(url("/other"))).status).toBe(404);
    expect((await fetch(url("/metrics"), { method: "POST" })).status).toBe(405);
  });

  it("calls scraped once each /metrics answer is written, and for nothing else", async () => {
    const before = scrapes;
    await (await fetch(url("/status"))).text();
    await (await fetch(url("/nothing"))).text();
    expect(scrapes).toBe(before);
    for (let i = 0; i < 3; i++) await (await fetch(url("/metrics"))).text();
    // the callback runs when the answer is flushed, which may trail the client's read a moment
    for (let i = 0; i < 50 && scrapes < before + 3; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(scrapes).toBe(before + 3);
  });
});
