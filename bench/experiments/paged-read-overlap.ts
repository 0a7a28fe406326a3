// Whether etcd serves the next page of a paged read while the sink takes this one:
// `tsx bench/experiments/paged-read-overlap.ts [keys]` (default 100,000, the growth fixture, one
// etcd). Reads the prefix with `readRangePages` and a sink busy 0, 50 and 100 ms a page, 3 rounds;
// with the pages overlapped, a busy sink adds little more than its own time beyond etcd's.
import { Etcd3 } from "etcd3";
import { readRangePages } from "../../adapters/paged-range.js";
import { startEtcd } from "../../testkit/etcd.js";
import { Cleanup } from "../lib/cleanup.js";
import { putAll } from "../lib/etcd-load.js";
import { growthFixture } from "../lib/fixture.js";

const keys = Number(process.argv[2] ?? 100_000);
const cleanup = new Cleanup();
try {
  const etcd = await startEtcd();
  cleanup.add("etcd", () => etcd.stop());
  const client = new Etcd3({ hosts: etcd.endpoint });
  cleanup.add("client", () => client.close());
  const prefix = "/overlap/";
  await putAll(client, prefix, growthFixture(keys));
  for (let round = 0; round < 3; round++) {
    for (const busyMs of [0, 50, 100]) {
      const t0 = performance.now();
      const read = await readRangePages(client, prefix, () => () => {
        const end = performance.now() + busyMs;
        while (performance.now() < end);
      });
      const ms = performance.now() - t0;
      process.stdout.write(
        `sink busy ${busyMs} ms a page: ${ms.toFixed(0)} ms, ${read.pages} pages\n`,
      );
    }
  }
} finally {
  await cleanup.runAll();
}
