// The first-push floor, run as its own Node process (bench/lib/first-push-floor.ts builds and
// starts it): the least a pusher can do between its start and KV holding a prefix. Node once,
// etcd3, the same paged read of the prefix as the pusher's (`readRangePages`, 10,000-key pages),
// each key and value decoded to text and each value through JSON.parse (a value that is not JSON
// counts as read), then one KV write of a FLOOR_BYTES value through the Cloudflare API's bulk
// endpoint, as the pusher writes. No election, validation, compile, metrics or log.
// Environment (this file is an entry point): FLOOR_ETCD, FLOOR_PREFIX, FLOOR_KV_BULK_URL (the
// namespace's `/bulk`), FLOOR_TOKEN, FLOOR_KEY, FLOOR_TAG (the value starts with it),
// FLOOR_BYTES. stdout: the keys read, and how many of their values were JSON.
import { Etcd3 } from "etcd3";
import { readRangePages } from "../../adapters/paged-range.js";

const need = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`first-push floor: ${name} is not set`);
  return v;
};
const client = new Etcd3({ hosts: need("FLOOR_ETCD") });
let parsed = 0;
const read = await readRangePages(client, need("FLOOR_PREFIX"), () => (kvs) => {
  for (const kv of kvs) {
    if (!kv.key.toString("utf8")) continue;
    try {
      JSON.parse(kv.value.toString("utf8"));
      parsed++;
    } catch {
      // junk: read all the same
    }
  }
});
const res = await fetch(need("FLOOR_KV_BULK_URL"), {
  method: "PUT",
  headers: { authorization: `Bearer ${need("FLOOR_TOKEN")}`, "content-type": "application/json" },
  body: JSON.stringify([
    {
      key: need("FLOOR_KEY"),
      value: `${need("FLOOR_TAG")}:${"x".repeat(Number(need("FLOOR_BYTES")))}`,
    },
  ]),
});
if (!res.ok) throw new Error(`first-push floor: KV answered ${res.status}`);
await res.arrayBuffer();
client.close();
process.stdout.write(`${read.count} ${parsed}\n`);
