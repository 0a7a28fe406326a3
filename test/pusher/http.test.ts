import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { KvError } from "../../adapters/kv/kv-sink.js";
import { systemClock } from "../../pusher/clock.js";
import { type StatusServer, startStatusServer } from "../../pusher/http-server.js";
import { createMetrics } from "../../pusher/metrics.js";
import { PusherStatus, type StatusDocument } from "../../pusher/status.js";
import { RoutingView } from "../../pusher/ui/routing-view.js";
import { createUiHandler } from "../../pusher/ui/ui-handler.js";
import { getWithHost } from "../helpers/host-request.js";
import { MemoryKv } from "../helpers/memory-kv.js";
import {
  kvRoutes,
  type StartPusherOptions,
  seedRouting,
  uniqueNames,
  useEtcd,
  waitFor,
} from "./harness.js";

const ctx = useEtcd();

async function serve(o: Omit<StartPusherOptions, "endpoint"> & { endpoint?: string }) {
  const p = ctx.start(o);
  const server: StatusServer = await startStatusServer({
    host: "127.0.0.1",
    port: 0,
    status: p.pusher.status,
    metrics: p.pusher.metrics,
  });
  ctx.cleanups.push(() => server.close());
  const base = `http://127.0.0.1:${server.port}`;
  return { p, get: (path: string) => fetch(`${base}${path}`) };
}

const SECRET = "cf-token-ABCDEF123456";

describe("pusher HTTP endpoints", () => {
  it("serves /livez, /readyz (= /healthz), /status and /metrics for a caught-up leader", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    await ctx.client.put(`${prefix}country/FR`).value("not json");
    const { p, get } = await serve({ prefix, electionKey, id: "pusher-http" });
    const routes = await waitFor("push", () => kvRoutes(p.kv));
    await waitFor("status caught up", () => p.pusher.status.pushedRevision === routes.rev);

    for (const path of ["/readyz", "/healthz"]) {
      const ready = await get(path);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ ok: true, role: "leader" });
    }
    const live = await get("/livez");
    expect(live.status).toBe(200);
    expect(await live.json()).toMatchObject({ ok: true });

    const status = (await (await get("/status")).json()) as StatusDocument;
    expect(status).toMatchObject({
      role: "leader",
      pusher: "pusher-http",
      lease_ok: true,
      pushed_revision: routes.rev,
      routes_revision: routes.rev,
      etcd_revision: routes.rev,
      lag_revisions: 0,
      lag_seconds: 0,
      etcd_reachable: true,
      kv_ok: true,
    });
    expect(status.problems).toEqual(routes.problems);
    expect(status.problems.some((s) => s.startsWith("country/FR:"))).toBe(true);

    const metrics = await get("/metrics");
    expect(metrics.headers.get("content-type")).toContain("text/plain");
    const text = await metrics.text();
    for (const line of [
      `edge_pusher_pushed_revision ${routes.rev}`,
      `edge_pusher_etcd_revision ${routes.rev}`,
      "edge_pusher_lag_seconds 0",
      "edge_pusher_is_leader 1",
      "edge_pusher_history 0",
      `edge_pusher_problems ${routes.problems.length}`,
      "edge_pusher_drift_repairs_total 0",
      "edge_pusher_push_errors_total 0",
    ]) {
      expect(text).toContain(line);
    }
    expect(text).toMatch(/edge_pusher_pushes_total [1-9]/);
    expect(text).toMatch(/edge_pusher_write_duration_seconds_count [1-9]/);
    expect((await get("/nope")).status).toBe(404);
  });

  it("turns /healthz 503 while KV keeps failing, never showing the token, and recovers", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const kv = new MemoryKv();
    kv.failWrites(Number.POSITIVE_INFINITY, () => new KvError("server-error", `bad ${SECRET}`));
    const { get } = await serve({
      prefix,
      electionKey,
      kv,
      tuning: { unhealthyAfterMs: 500, secrets: [SECRET] },
    });
    // "behind etcd" may show first; wait until the KV failure itself is reported.
    const failing = await waitFor("503 naming the KV failure", async () => {
      const r = await get("/healthz");
      if (r.status !== 503) return null;
      const body = (await r.json()) as { reasons: string[] };
      return body.reasons.includes("kv writes failing") ? body : null;
    });
    expect(failing.reasons).toContain("kv writes failing");
    const statusText = await (await get("/status")).text();
    expect(statusText).not.toContain(SECRET);
    expect(JSON.parse(statusText).last_error.message).toContain("[redacted]");
    expect(JSON.parse(statusText).kv_ok).toBe(false);
    kv.heal();
    await waitFor("200 again", async () => (await get("/healthz")).status === 200);
    expect(await kvRoutes(kv)).not.toBeNull();
  });

  it("turns /readyz 503 when etcd is unreachable for too long, /livez staying 200", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const px = await ctx.proxy();
    const { p, get } = await serve({
      endpoint: px.endpoint,
      prefix,
      electionKey,
      electionTtl: 10,
      tuning: { unhealthyAfterMs: 500 },
    });
    await waitFor("push", () => kvRoutes(p.kv));
    expect((await get("/healthz")).status).toBe(200);
    px.disconnect();
    const body = await waitFor("503", async () => {
      const r = await get("/healthz");
      return r.status === 503 ? ((await r.json()) as { reasons: string[] }) : null;
    });
    expect(body.reasons).toContain("etcd unreachable");
    expect((await get("/readyz")).status).toBe(503);
    // An etcd outage never fails liveness: restarting would not bring etcd back.
    expect((await get("/livez")).status).toBe(200);
    px.accept();
    await waitFor("200 again", async () => (await get("/healthz")).status === 200, 20_000);
  });

  it("reports a healthy standby", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const leader = await serve({ prefix, electionKey, id: "l" });
    await waitFor("leader", () => leader.p.pusher.status.role === "leader");
    const standby = await serve({ prefix, electionKey, id: "s" });
    await waitFor("standby compiled", () => standby.p.pusher.status.etcdRevision !== null);
    const r = await standby.get("/healthz");
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ ok: true, role: "standby" });
    const status = (await (await standby.get("/status")).json()) as StatusDocument;
    expect(status).toMatchObject({ role: "standby", pusher: "s", pushed_revision: null });
    expect(await (await standby.get("/metrics")).text()).toContain("edge_pusher_is_leader 0");
  });
});

describe("the pusher's listener answers only to its own Host names (DNS rebinding)", () => {
  /** A status listener on `host` (no pusher loop: only the Host check is under test). */
  async function listener(host: string, allowedHosts?: readonly string[]) {
    const status = new PusherStatus("host-check", systemClock);
    const server = await startStatusServer({
      host,
      port: 0,
      status,
      metrics: createMetrics(status),
      ui: createUiHandler({ status, routing: new RoutingView("par-1") }),
      ...(allowedHosts ? { allowedHosts } : {}),
    });
    ctx.cleanups.push(() => server.close());
    return server.port;
  }
  const PATHS = ["/status", "/ui/data", "/metrics", "/livez", "/readyz", "/ui"];

  it("on loopback: 200 for its address and localhost, 421 with a reason for any other name", async () => {
    const port = await listener("127.0.0.1");
    for (const path of PATHS) {
      expect((await getWithHost(port, path, `127.0.0.1:${port}`)).status, path).toBe(200);
      expect((await getWithHost(port, path, `localhost:${port}`)).status, path).toBe(200);
      const evil = await getWithHost(port, path, `rebind.evil.example:${port}`);
      expect(evil.status, path).toBe(421);
      expect(JSON.parse(evil.body)).toEqual({
        error: "the Host header is not a name of this listener; PUSHER_ALLOWED_HOSTS adds names",
        reason: "host-not-allowed",
      });
      expect(evil.body).not.toContain("rebind.evil.example");
    }
    expect((await getWithHost(port, "/status", `127.0.0.1.evil.example:${port}`)).status).toBe(421);
  });

  it("adds the names PUSHER_ALLOWED_HOSTS lists (the name Prometheus scrapes)", async () => {
    const port = await listener("127.0.0.1", ["pusher-1.example.net"]);
    expect((await getWithHost(port, "/metrics", `pusher-1.example.net:${port}`)).status).toBe(200);
    expect((await getWithHost(port, "/metrics", `pusher-2.example.net:${port}`)).status).toBe(421);
  });

  it("on a wildcard address: the machine's host name and loopback, not another name", async () => {
    const port = await listener("0.0.0.0");
    expect((await getWithHost(port, "/status", `${hostname()}:${port}`)).status).toBe(200);
    expect((await getWithHost(port, "/status", `127.0.0.1:${port}`)).status).toBe(200);
    expect((await getWithHost(port, "/status", `localhost:${port}`)).status).toBe(200);
    expect((await getWithHost(port, "/status", `rebind.evil.example:${port}`)).status).toBe(421);
  });
});
