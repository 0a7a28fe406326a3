import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { COUNTRY_CODES, sameRouting } from "../../core/index.js";
import { createEtcdClient } from "../../pusher/etcd-client.js";
import { WatchTrigger } from "../../pusher/watch-trigger.js";
import { MemoryKv } from "../helpers/memory-kv.js";
import { compileNow, kvConverged, seedRouting, uniqueNames, useEtcd, waitFor } from "./harness.js";

const ctx = useEtcd();

const start = ctx.start;
const proxy = ctx.proxy;

async function put(key: string, value: unknown): Promise<number> {
  const res = await ctx.client.put(key).value(JSON.stringify(value)).exec();
  return Number(res.header.revision);
}

const converged = (kv: MemoryKv, prefix: string, rev = 0, timeoutMs = 20_000) =>
  kvConverged(ctx.client, kv, prefix, rev, timeoutMs);

const codes = [...COUNTRY_CODES].filter((c) => c.length === 2).slice(0, 30);
const pools = ["fra-1", "ams-1", "par-1"];

/** `count` puts spread over countries; returns the last revision. */
async function churn(prefix: string, count: number, between?: (i: number) => void) {
  let last = 0;
  for (let i = 0; i < count; i += 50) {
    between?.(i);
    const revs = await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, (_, j) =>
        put(`${prefix}country/${codes[(i + j) % codes.length]}`, {
          primary: pools[(i + j + Math.floor(i / 50)) % 3],
          fallbacks: [],
        }),
      ),
    );
    last = Math.max(last, ...revs);
  }
  return last;
}

describe("pusher under etcd faults", () => {
  it("survives etcd kill -9 and restart, and later changes arrive", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const p = start({ prefix, electionKey, electionTtl: 3 });
    await converged(p.kv, prefix);
    await ctx.etcd.kill("SIGKILL");
    await waitFor("etcd seen as unreachable", () => !p.pusher.status.document().etcd_reachable);
    await sleep(1_000);
    await ctx.etcd.restart();
    const rev = await put(`${prefix}country/NL`, { primary: "par-1", fallbacks: ["ams-1"] });
    const m = await converged(p.kv, prefix, rev, 30_000);
    expect(m.countries.NL?.pool).toBe("par-1");
    await waitFor("etcd reachable again", () => p.pusher.status.document().etcd_reachable);
  });

  it("loses nothing when connections drop repeatedly during a backlog of over 1,000 revisions", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const px = await proxy();
    const p = start({ endpoint: px.endpoint, prefix, electionKey, electionTtl: 5 });
    const before = await converged(p.kv, prefix);
    px.disconnect();
    const mid = await churn(prefix, 1_100);
    expect(mid - before.rev).toBeGreaterThan(1_000);
    px.accept();
    // Cut again while the pusher is catching up, and keep writing between cuts.
    const last = await churn(prefix, 300, (i) => {
      if (i % 100 === 0) px.cut();
    });
    const m = await converged(p.kv, prefix, last, 30_000);
    expect(sameRouting(m, await compileNow(ctx.client, prefix))).toBe(true);
  });

  it("converges after compaction past its revision while disconnected", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const px = await proxy();
    const p = start({ endpoint: px.endpoint, prefix, electionKey, electionTtl: 5 });
    const before = await converged(p.kv, prefix);
    px.disconnect();
    const last = await churn(prefix, 100);
    ctx.etcd.ctl("compaction", String(last));
    px.accept();
    const m = await converged(p.kv, prefix, last, 30_000);
    expect(m.rev).toBeGreaterThan(before.rev);
    const rev = await put(`${prefix}country/DE`, { primary: "par-1", fallbacks: [] });
    const later = await converged(p.kv, prefix, rev);
    expect(later.countries.DE?.pool).toBe("par-1");
  });

  it("converges after compaction while stopped, from the map in KV", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const kv = new MemoryKv();
    const a = start({ prefix, electionKey, kv });
    await converged(kv, prefix);
    await a.stop();
    const last = await churn(prefix, 100);
    ctx.etcd.ctl("compaction", String(last));
    const b = start({ prefix, electionKey, kv });
    await converged(kv, prefix, last);
    const rev = await put(`${prefix}country/DE`, { primary: "ams-1", fallbacks: [] });
    expect((await converged(b.kv, prefix, rev)).countries.DE?.pool).toBe("ams-1");
  });

  it("reports a watch cancelled by compaction so the owner re-lists", async () => {
    const { prefix } = uniqueNames();
    const first = await put(`${prefix}country/DE`, { primary: "ams-1", fallbacks: [] });
    const last = await put(`${prefix}country/DE`, { primary: "par-1", fallbacks: [] });
    ctx.etcd.ctl("compaction", String(last));
    const watchClient = createEtcdClient({ endpoints: [ctx.etcd.endpoint] });
    ctx.cleanups.push(() => watchClient.close());
    const lost: string[] = [];
    const trigger = new WatchTrigger({ connect: () => watchClient, owned: false }, prefix, {
      onChange: () => {},
      onLost: (reason) => lost.push(reason),
    });
    ctx.cleanups.push(() => trigger.stop());
    trigger.start(first - 1);
    await waitFor("cancelled watch", () => lost.includes("cancelled"));
  });
});
