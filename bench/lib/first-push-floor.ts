import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { spawnOwned } from "../../testkit/owned-process.js";
import type { Cleanup } from "./cleanup.js";
import { floorBundle } from "./floor-bundle.js";
import { pollUntil } from "./poll-until.js";
import type { Stack } from "./stack.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The first-push floor on `stack`'s etcd and KV stand-in (bench/lib/first-push-floor-child.ts):
 * ms from spawning it until the stand-in holds its value of `bytes`, polled every 20 ms as the
 * pusher's first push is. Runs after the pusher's, so etcd serves it warm, as it served the
 * pusher the fixture it had just written.
 */
export async function firstPushFloorMs(
  stack: Stack,
  bytes: number,
  cleanup: Cleanup,
  deployed: Readonly<Record<string, string>>,
): Promise<number> {
  const api = stack.kvApi;
  if (!api)
    throw new Error("the first-push floor writes through the Cloudflare API: use that sink");
  const child = await floorBundle("first-push", { entry: "bench/lib/first-push-floor-child.ts" });
  const tag = randomUUID();
  // A key of its own each run: KV takes one write a second per key.
  const key = `first-push-floor-${tag.slice(0, 8)}`;
  const spawned = performance.now();
  const proc = spawnOwned("first-push floor", process.execPath, [child], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      ...deployed,
      FLOOR_ETCD: stack.etcd.endpoint,
      FLOOR_PREFIX: stack.prefix,
      FLOOR_KV_BULK_URL: `${api.url}/accounts/${api.accountId}/storage/kv/namespaces/${api.namespaceId}/bulk`,
      FLOOR_TOKEN: api.token,
      FLOOR_KEY: key,
      FLOOR_TAG: tag,
      FLOOR_BYTES: String(bytes),
    },
    outputLimit: 8 * 1024,
  });
  const drop = cleanup.add(`first-push floor ${proc.pid}`, () => proc.stop(5_000));
  try {
    const seen = await pollUntil(
      async () => {
        const v = await stack.reader.get(key);
        return v?.startsWith(`${tag}:`) ? performance.now() : null;
      },
      { timeoutMs: 90_000, intervalMs: 20 },
    );
    if (seen === null) throw new Error(`the first-push floor never wrote KV: ${proc.output()}`);
    await proc.exited;
    return seen - spawned;
  } finally {
    await drop();
  }
}
