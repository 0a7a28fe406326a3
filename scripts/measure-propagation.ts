/**
 * Measures put→KV propagation through the pusher: a real etcd (started here), the local
 * Miniflare sink in a temp dir, and N changes each after a quiet second (so none is throttled).
 *
 *   npx tsx scripts/measure-propagation.ts [changes=50]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Etcd3 } from "etcd3";
import { pino } from "pino";
import { createLocalSink } from "../adapters/kv/index.js";
import { parseMap } from "../core/index.js";
import { systemClock } from "../pusher/clock.js";
import { createEtcdClient } from "../pusher/etcd-client.js";
import { createPusher } from "../pusher/pusher.js";
import { startEtcd } from "../test/helpers/etcd.js";

const changes = Number(process.argv[2] ?? 50);
const prefix = "/measure/routing/v1/";
const etcd = await startEtcd();
const persist = mkdtempSync(join(tmpdir(), "measure-kv-"));
const client = new Etcd3({ hosts: etcd.endpoint });
const kv = await createLocalSink({ persistDir: persist, namespaceId: "measure" });
const pusherEtcd = createEtcdClient({ endpoints: [etcd.endpoint] });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

try {
  const put = async (k: string, v: unknown) =>
    Number((await client.put(`${prefix}${k}`).value(JSON.stringify(v)).exec()).header.revision);
  for (const pool of ["fra-1", "ams-1", "par-1"]) {
    await put(`pool/${pool}`, { origin: `https://${pool}.example.net` });
    await put(`health/${pool}`, { status: "healthy" });
  }
  await put("country/_default", { primary: "ams-1", fallbacks: ["par-1"] });
  const pusher = createPusher({
    etcd: pusherEtcd,
    kv,
    logger: pino({ level: "warn" }),
    clock: systemClock,
    config: {
      prefix,
      originTemplate: "https://{pool}.origin.example.com",
      floorPool: "par-1",
      heartbeatSeconds: 60,
      resyncSeconds: 600,
      electionKey: "/measure/pusher/leader",
      electionTtl: 5,
      pusherId: "measure",
    },
  });
  pusher.start();
  const kvRev = async () => parseMap((await kv.get("routes")) ?? "")?.rev ?? 0;
  while ((await kvRev()) === 0) await sleep(20);

  const latencies: number[] = [];
  const pools = ["fra-1", "ams-1", "par-1"];
  for (let i = 0; i < changes; i++) {
    await sleep(1_100); // a quiet second: the next write is not throttled
    const t0 = performance.now();
    const rev = await put("country/DE", { primary: pools[i % 3], fallbacks: [] });
    while ((await kvRev()) < rev) await sleep(2);
    latencies.push(performance.now() - t0);
  }
  await pusher.stop();
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
  console.log(`command: npx tsx scripts/measure-propagation.ts ${changes}`);
  console.log(`changes: ${latencies.length} (each after >= 1.1 s quiet), sink: local (Miniflare)`);
  console.log(
    `median ${fmt(at(0.5))}  p90 ${fmt(at(0.9))}  max ${fmt(latencies.at(-1) ?? 0)}  min ${fmt(latencies[0] ?? 0)}`,
  );
} finally {
  pusherEtcd.close();
  client.close();
  await kv.close();
  await etcd.stop();
  rmSync(persist, { recursive: true, force: true });
}
