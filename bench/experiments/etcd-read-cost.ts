// What one etcd read costs, by kind and by client: `tsx bench/experiments/etcd-read-cost.ts [n]`.
// A fresh etcd with a 300-key prefix; each read alone, 10 ms apart, n rounds. Prints the p50 and
// p10 of a one-key get, the pusher's delta read (plain and serializable), the prefix head, and the
// delta read through a plain etcd3 client against the pusher's own (deadline, hasleader, breaker).

import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import { createEtcdClient } from "../../pusher/etcd-client.js";
import { readPrefixDelta, readPrefixHead } from "../../pusher/prefix-version.js";
import { startEtcd } from "../../testkit/etcd.js";
import { summarize } from "../lib/stats.js";

const rounds = Number(process.argv[2] ?? 150);
const etcd = await startEtcd();
const plain = new Etcd3({ hosts: etcd.endpoint });
const product = createEtcdClient({ endpoints: [etcd.endpoint] });
try {
  for (let i = 0; i < 300; i++)
    await plain.put(`/r/country/K${i}`).value('{"primary":"p001","fallbacks":["p002"]}');
  await plain.put("/s/x").value("1");
  const never = 2 ** 30;
  const kinds: Record<string, () => Promise<unknown>> = {
    "get, one key": () => plain.get("/s/x").string(),
    "delta read, 300 keys": () => readPrefixDelta(plain, "/r/", never, 1_000),
    "  the same, serializable": () =>
      plain.kv.range({
        key: Buffer.from("/r/"),
        range_end: Buffer.from("/r0"),
        min_mod_revision: never,
        serializable: true,
      }),
    "prefix head, 300 keys": () => readPrefixHead(plain, "/r/"),
    "delta read, the pusher's client": () => readPrefixDelta(product, "/r/", never, 1_000),
  };
  const times = new Map(Object.keys(kinds).map((k) => [k, [] as number[]]));
  for (let i = 0; i < rounds; i++) {
    for (const [kind, read] of Object.entries(kinds)) {
      await sleep(10);
      const t0 = performance.now();
      await read();
      times.get(kind)?.push(performance.now() - t0);
    }
  }
  for (const [kind, t] of times) {
    const s = summarize(t);
    const p10 = [...t].sort((a, b) => a - b)[Math.floor(t.length / 10)] ?? Number.NaN;
    console.log(`${kind.padEnd(34)} p50 ${s.p50.toFixed(2)} ms  p10 ${p10.toFixed(2)} ms`);
  }
} finally {
  plain.close();
  product.close();
  await etcd.stop();
}
