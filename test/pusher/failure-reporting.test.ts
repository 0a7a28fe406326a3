import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createCloudflareSink } from "../../adapters/kv/cloudflare-sink.js";
import { Secret } from "../../adapters/kv/secret.js";
import { DEFAULT_FLOOR_POOL, DEFAULT_ORIGIN_TEMPLATE } from "../../core/index.js";
import { systemClock } from "../../pusher/clock.js";
import { createEtcdClient } from "../../pusher/etcd-client.js";
import { createPusher, type Pusher } from "../../pusher/pusher.js";
import { startKvStandin } from "../../testkit/kv-standin.js";
import { parsePromText, sampleValue } from "../../testkit/prom-text.js";
import { seedRouting, uniqueNames, useEtcd, waitFor } from "./harness.js";

const ctx = useEtcd();

/** A real pusher writing through the Cloudflare sink to the stand-in, with `token`. */
async function pusherWithToken(token: string): Promise<Pusher> {
  const s = await startKvStandin({ token: "cf-the-right-token-0123456789" });
  ctx.cleanups.push(() => s.close());
  const { prefix, electionKey } = uniqueNames();
  await seedRouting(ctx.client, prefix);
  const etcd = createEtcdClient({ endpoints: [ctx.etcd.endpoint] });
  const pusher = createPusher({
    etcd,
    kv: createCloudflareSink({
      accountId: s.accountId,
      namespaceId: s.namespaceId,
      apiToken: new Secret(token),
      baseUrl: s.url,
      timeoutMs: 2_000,
    }),
    logger: pino({ level: process.env.PUSHER_TEST_LOG ?? "silent" }),
    clock: systemClock,
    config: {
      prefix,
      originTemplate: DEFAULT_ORIGIN_TEMPLATE,
      floorPool: DEFAULT_FLOOR_POOL,
      heartbeatSeconds: 60,
      resyncSeconds: 600,
      electionKey,
      electionTtl: 2,
      pusherId: `kv-fail-${randomUUID().slice(0, 4)}`,
    },
    tuning: { kvBackoff: { baseMs: 50, maxMs: 300 }, secrets: [token] },
  });
  pusher.start();
  ctx.cleanups.push(async () => {
    await pusher.stop({ flushTimeoutMs: 1_000 });
    etcd.close();
  });
  return pusher;
}

const pushErrors = async (p: Pusher) =>
  sampleValue(
    parsePromText(
      await p.metrics.registry.getSingleMetricAsString("edge_pusher_push_errors_total"),
    ),
    "edge_pusher_push_errors_total",
  ) ?? 0;

describe("the pusher's KV and etcd failures, as on-call sees them", () => {
  it("a token refused at start counts in push_errors_total (EdgePusherKvWriteFailures fires), and /status says why", async () => {
    const token = "cf-a-well-formed-but-wrong-token";
    const p = await pusherWithToken(token);
    // The leader's first KV request, the read of `routes`, is refused, and keeps being refused.
    expect(await waitFor("push errors counted", async () => (await pushErrors(p)) >= 2)).toBe(true);
    const doc = p.status.document();
    expect(doc.role).toBe("leader");
    expect(doc.kv_ok).toBe(false);
    expect(doc.pushed_revision).toBeNull();
    expect(doc.last_error?.message).toMatch(/^kv: KvError: get: HTTP 403 \(10000 /);
    expect(JSON.stringify(doc)).not.toContain(token);
  });

  it("with etcd stopped, /status.last_error names etcd's own error, never only the open circuit breaker", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const p = ctx.start({ prefix, electionKey });
    await waitFor("first push", () => p.pusher.status.document().pushed_revision !== null);
    await ctx.etcd.kill("SIGKILL");
    try {
      await waitFor("etcd seen as down", () => !p.pusher.status.document().etcd_reachable);
      // The breaker opens after 3 failures and lets a probe through every 500 ms: read the
      // message across several of its cycles.
      const seen = new Set<string>();
      const until = Date.now() + 4_000;
      while (Date.now() < until) {
        seen.add(p.pusher.status.document().last_error?.message ?? "none");
        await sleep(50);
      }
      for (const message of seen) {
        expect(message).toMatch(/^etcd: /);
        expect(message).toMatch(
          /UNAVAILABLE|ECONNREFUSED|No connection established|DEADLINE_EXCEEDED/,
        );
      }
    } finally {
      await ctx.etcd.restart();
    }
  });
});
