import { randomUUID } from "node:crypto";
import { createConnection, createServer, type Socket } from "node:net";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { readPrefix } from "../../adapters/prefix-read.js";
import { DEFAULT_FLOOR_POOL, DEFAULT_ORIGIN_TEMPLATE } from "../../core/index.js";
import { systemClock } from "../../pusher/clock.js";
import { createEtcdClient, createWatchClient } from "../../pusher/etcd-client.js";
import { createPusher } from "../../pusher/pusher.js";
import { PusherStatus } from "../../pusher/status.js";
import { WatchGuard } from "../../pusher/watch-guard.js";
import { WatchTrigger } from "../../pusher/watch-trigger.js";
import { MemoryKv } from "../helpers/memory-kv.js";
import { kvConverged, seedRouting, uniqueNames, useEtcd, waitFor } from "./harness.js";

const ctx = useEtcd();

/**
 * A proxy whose open connections can be frozen: bytes stop flowing both ways but nothing is
 * closed, as on a black-holed path. New connections work normally.
 */
async function startFreezableProxy(targetPort: number) {
  const pairs = new Set<[Socket, Socket]>();
  const all = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection({ host: "127.0.0.1", port: targetPort });
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    all.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    freeze() {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      pairs.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const sock of all) sock.destroy();
      }),
  };
}

describe("watch guard", () => {
  it("replaces a watch whose connection went silent, so a change reaches KV within seconds", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const px = await startFreezableProxy(ctx.etcd.clientPort);
    const opened: ReturnType<typeof createWatchClient>[] = [];
    ctx.cleanups.push(async () => {
      for (const c of opened) c.close();
      await px.close();
    });
    // Reads and leadership go straight to etcd; only the watch (and its probe) use the proxy.
    const etcd = createEtcdClient({ endpoints: [ctx.etcd.endpoint] });
    const kv = new MemoryKv();
    const pusher = createPusher({
      etcd,
      openWatchClient: () => {
        const c = createWatchClient({ endpoints: [px.endpoint] });
        opened.push(c);
        return c;
      },
      kv,
      logger: pino({ level: process.env.PUSHER_TEST_LOG ?? "silent" }),
      clock: systemClock,
      config: {
        prefix,
        originTemplate: DEFAULT_ORIGIN_TEMPLATE,
        floorPool: DEFAULT_FLOOR_POOL,
        heartbeatSeconds: 60,
        resyncSeconds: 600,
        electionKey,
        electionTtl: 10,
        pusherId: `guard-${randomUUID().slice(0, 6)}`,
      },
    });
    pusher.start();
    ctx.cleanups.push(async () => {
      await pusher.stop({ flushTimeoutMs: 2_000 });
      etcd.close();
    });
    await kvConverged(ctx.client, kv, prefix);
    const restarts = async () =>
      [
        ...(
          await pusher.metrics.registry.getSingleMetricAsString("edge_pusher_watch_restarts_total")
        ).matchAll(/\} (\d+)$/gm),
      ].reduce((n, m) => n + Number(m[1]), 0);
    const before = await restarts();
    px.freeze();
    const rev = Number(
      (
        await ctx.client
          .put(`${prefix}country/FR`)
          .value(JSON.stringify({ primary: "par-1", fallbacks: [] }))
          .exec()
      ).header.revision,
    );
    const at = Date.now();
    // gRPC's own keepalive would notice the dead connection only after 15 s.
    const map = await kvConverged(ctx.client, kv, prefix, rev, 8_000);
    expect(map.countries.FR?.pool).toBe("par-1");
    console.info(`frozen watch: change→KV ${Date.now() - at} ms`);
    await waitFor("watch restarted", async () => (await restarts()) > before, 8_000);
    // Later changes keep arriving.
    const rev2 = Number(
      (
        await ctx.client
          .put(`${prefix}country/FR`)
          .value(JSON.stringify({ primary: "ams-1", fallbacks: [] }))
          .exec()
      ).header.revision,
    );
    const second = await kvConverged(ctx.client, kv, prefix, rev2, 8_000);
    expect(second.countries.FR?.pool).toBe("ams-1");
  });

  it("calls a watch silent only once it owes a change the probe saw for the silence window", async () => {
    const { prefix } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const px = await startFreezableProxy(ctx.etcd.clientPort);
    const watchClient = createWatchClient({ endpoints: [px.endpoint] });
    const probeClient = createWatchClient({ endpoints: [ctx.etcd.endpoint] });
    ctx.cleanups.push(async () => {
      watchClient.close();
      probeClient.close();
      await px.close();
    });
    const delivered: number[] = [];
    const trigger = new WatchTrigger({ connect: () => watchClient, owned: false }, prefix, {
      onChange: (r) => delivered.push(r),
      onLost: () => {},
    });
    ctx.cleanups.push(() => trigger.stop());
    const first = await readPrefix(ctx.client, prefix);
    trigger.start(first.revision);
    const put = async (pool: string) =>
      Number(
        (
          await ctx.client
            .put(`${prefix}country/FR`)
            .value(JSON.stringify({ primary: pool, fallbacks: [] }))
            .exec()
        ).header.revision,
      );
    // A working watch: it delivers, and the guard never calls it silent.
    const r1 = await put("fra-1");
    await waitFor("event", () => delivered.includes(r1));
    const silent: number[] = [];
    const moved: number[] = [];
    const status = new PusherStatus("guard-test", systemClock);
    const guard = new WatchGuard({
      prefix,
      intervalMs: 200,
      silenceMs: 1_000,
      clock: systemClock,
      logger: pino({ level: "silent" }),
      status,
      client: () => probeClient,
      compiled: () => first,
      watched: () => trigger.coveredRevision,
      onMoved: () => moved.push(Date.now()),
      onSilent: (owed) => silent.push(owed),
    });
    for (let i = 0; i < 8; i++) await guard.probe();
    expect(moved.length).toBeGreaterThan(0);
    expect(silent).toEqual([]);
    // Frozen: the watch stays open and says nothing.
    px.freeze();
    const r2 = await put("ams-1");
    const owedAt = Date.now();
    await guard.probe();
    expect(silent).toEqual([]);
    await waitFor(
      "silent",
      async () => {
        await guard.probe();
        return silent.length > 0;
      },
      5_000,
      100,
    );
    expect(Date.now() - owedAt).toBeGreaterThanOrEqual(1_000);
    expect(silent).toEqual([r2]);
    expect(delivered).not.toContain(r2);
  });
});
