// Where does the pusher spend a propagation? Runs the pusher in-process (createPusher) on the
// local sink wrapped to timestamp each putMany, and splits put → KV into: put → putMany call
// (watch, range read, compile, scheduling) and the putMany itself. `tsx bench/probe-pusher.ts`
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Etcd3 } from "etcd3";
import { pino } from "pino";
import { createLocalSink, type KvSink } from "../adapters/kv/index.js";
import { systemClock } from "../pusher/clock.js";
import { createEtcdClient } from "../pusher/etcd-client.js";
import { createPusher } from "../pusher/pusher.js";
import { startEtcd } from "../test/helpers/etcd.js";
import { putAll, putOne } from "./lib/etcd-load.js";
import { scaleFixture } from "./lib/fixture.js";
import { sleep } from "./lib/sleep.js";
import { summarize } from "./lib/stats.js";

const etcd = await startEtcd();
const dir = mkdtempSync(join(tmpdir(), "edge-probe-"));
const prefix = "/probe/routing/v1/";
const client = new Etcd3({ hosts: etcd.endpoint });
const inner = await createLocalSink({ persistDir: dir, namespaceId: "probe" });
const calls: Array<{ at: number; done: number; keys: string[] }> = [];
const kv: KvSink = {
  kind: inner.kind,
  get: (k) => inner.get(k),
  async putMany(entries) {
    const at = performance.now();
    await inner.putMany(entries);
    calls.push({ at, done: performance.now(), keys: entries.map((e) => e.key) });
  },
  close: () => inner.close(),
};
const pusherEtcd = createEtcdClient({ endpoints: [etcd.endpoint] });
const pusher = createPusher({
  etcd: pusherEtcd,
  kv,
  logger: pino({ level: "silent" }),
  clock: systemClock,
  config: {
    prefix,
    originTemplate: "https://{pool}.example.net",
    floorPool: "p000",
    heartbeatSeconds: 600,
    resyncSeconds: 600,
    electionKey: "/probe/pusher/leader",
    electionTtl: 5,
    pusherId: "probe",
  },
});
try {
  await putAll(client, prefix, scaleFixture({ keys: 0, pools: 20 }));
  pusher.start();
  await sleep(3_000);
  const internal: number[] = [];
  const write: number[] = [];
  for (let i = 0; i < 20; i++) {
    await sleep(1_100);
    const n = calls.length;
    const t0 = performance.now();
    await putOne(
      client,
      `${prefix}country/DE`,
      JSON.stringify({ primary: i % 2 ? "p001" : "p002", fallbacks: [] }),
    );
    while (calls.length === n) await sleep(1);
    const c = calls[n]!;
    internal.push(c.at - t0);
    write.push(c.done - c.at);
  }
  const a = summarize(internal);
  const b = summarize(write);
  console.log(`put → putMany call: p50 ${a.p50.toFixed(1)} ms (max ${a.max.toFixed(1)})`);
  console.log(`putMany (routes + meta): p50 ${b.p50.toFixed(1)} ms (max ${b.max.toFixed(1)})`);
} finally {
  await pusher.stop({ flushTimeoutMs: 1000 });
  pusherEtcd.close();
  client.close();
  await kv.close();
  await etcd.stop();
  rmSync(dir, { recursive: true, force: true });
}
