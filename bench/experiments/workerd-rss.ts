// Does workerd's own memory grow under a Worker that keeps nothing, and does reading the
// isolate's heap over the inspector (as the soak does every 10 s) change that?
// `tsx bench/experiments/workerd-rss.ts [minutes] [inspect]`: a Worker that answers `ok`, 40
// requests a second over HTTP; prints workerd's RSS and anonymous RSS every 10 s, and with
// `inspect` the isolate's heap after a full collection, read as the soak reads it.
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { openIsolateHeap } from "../../soak/isolate-heap.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { freePort } from "../../testkit/ports.js";
import { compatibilityDate } from "../../testkit/worker.js";
import { childPids, commName } from "../lib/proc.js";

const minutes = Number(process.argv[2] ?? 3);
const inspect = process.argv[3] === "inspect";
const inspectorPort = await freePort();
const mf = newMiniflare({
  host: "127.0.0.1",
  port: 0,
  cf: false,
  inspectorPort,
  workers: [
    {
      name: "ok",
      modules: true,
      script: "export default { fetch() { return new Response('ok'); } };",
      compatibilityDate: await compatibilityDate(),
    },
  ],
});
const url = (await mf.ready).toString();
const workerd = childPids(process.pid).find((p) => commName(p) === "workerd");
if (workerd === undefined) throw new Error("no workerd child");
const heap = inspect ? await openIsolateHeap(inspectorPort, "ok") : null;
const kib = (field: string) =>
  Number(
    new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${workerd}/status`, "utf8"))?.[1],
  );
let stop = false;
let requests = 0;
const load = (async () => {
  while (!stop) {
    await (await fetch(url)).text();
    requests += 1;
    await sleep(25);
  }
})();
const t0 = Date.now();
while (Date.now() - t0 < minutes * 60_000) {
  await sleep(10_000);
  const used = heap ? await heap.usedAfterGcMiB() : null;
  console.log(
    `${Math.round((Date.now() - t0) / 1000)} s: ${requests} requests, workerd RSS ${(kib("VmRSS") / 1024).toFixed(0)} MiB, anon ${(kib("RssAnon") / 1024).toFixed(0)} MiB${used === null ? "" : `, isolate heap ${used.toFixed(2)} MiB`}`,
  );
}
stop = true;
await load;
heap?.close();
await mf.dispose();
