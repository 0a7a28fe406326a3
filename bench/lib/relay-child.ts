// The propagation floor's relay, run as its own process (bench/lib/relay-process.ts starts it):
// the least an etcd → KV relay can do. One etcd watch on a prefix; on each put event, one KV put
// of a fixed-size value through the same local sink as the pusher's (`createLocalSink`: its own
// Miniflare, its own workerd), nothing else: no read, no compile, no log on the way. With
// RELAY_READ_PREFIX, each event first reads that prefix as the pusher does after its watch event
// (`readPrefixDelta`: the keys modified since the last read), the read its design cannot skip.
// Environment (this file is an entry point): RELAY_ETCD, RELAY_PREFIX, RELAY_PERSIST,
// RELAY_NAMESPACE, RELAY_KEY, RELAY_PAD_FILE (the value's body, e.g. a copy of `routes`),
// RELAY_READ_PREFIX (optional).
// stdout: `ready` once watching; then, for each `report` line on stdin, one JSON line with the
// epoch-ms times of every event seen and every put done (collected in memory, off the hot path).
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Etcd3, type IWatchResponse } from "etcd3";
import { createLocalSink } from "../../adapters/kv/local-sink.js";
import { readPrefixDelta, readPrefixHead } from "../../pusher/prefix-version.js";

const need = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`relay: ${name} is not set`);
  return v;
};
const key = need("RELAY_KEY");
const pad = readFileSync(need("RELAY_PAD_FILE"), "utf8");
const sink = await createLocalSink({
  persistDir: need("RELAY_PERSIST"),
  namespaceId: need("RELAY_NAMESPACE"),
});
const client = new Etcd3({ hosts: need("RELAY_ETCD") });
const epoch = () => performance.timeOrigin + performance.now();
const seen: Array<{ tag: string; event: number; put: number }> = [];
const readPrefix = process.env.RELAY_READ_PREFIX;
let readRevision = readPrefix ? (await readPrefixHead(client, readPrefix)).revision : 0;
/** The read before the put, when asked for: one delta read since the last one. */
const readFirst = async (): Promise<void> => {
  if (!readPrefix) return;
  const delta = await readPrefixDelta(client, readPrefix, readRevision, 1_000);
  if (delta) readRevision = delta.revision;
};

const watcher = await client.watch().prefix(need("RELAY_PREFIX")).create();
watcher.on("data", (res: IWatchResponse) => {
  for (const ev of res.events) {
    const event = epoch();
    const tag = ev.kv.value.toString("utf8");
    void readFirst()
      .then(() => sink.putMany([{ key, value: `${tag}:${pad}` }]))
      .then(
        () => seen.push({ tag, event, put: epoch() }),
        (e: unknown) => process.stderr.write(`relay: put failed: ${String(e)}\n`),
      );
  }
});

const stop = async () => {
  await watcher.cancel().catch(() => {});
  client.close();
  await sink.close();
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line === "report") process.stdout.write(`${JSON.stringify(seen)}\n`);
});
process.stdin.on("end", () => void stop());
process.stdout.write("ready\n");
