import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";

const ROOT = resolve(import.meta.dirname, "../..");
const KEY = "/restart-test/health/fra-1";
let etcd: EtcdServer;
let client: Etcd3;
const children: ChildProcess[] = [];
beforeAll(async () => {
  etcd = await startEtcd();
  client = new Etcd3({ hosts: etcd.endpoint });
});
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  client?.close();
  await etcd?.stop();
});

/** `edgectl heartbeat fra-1` as the unit runs it (TTL 5 s here, the unit's is 15 s). */
function heartbeat(): ChildProcess {
  const hb = spawn(
    process.execPath,
    [resolve(ROOT, "bin/edgectl.js"), "heartbeat", "fra-1", "--ttl", "5", "--interval", "1"],
    {
      env: {
        PATH: process.env.PATH ?? "",
        ETCD_ENDPOINTS: etcd.endpoint,
        ROUTING_PREFIX: "/restart-test/",
      },
      stdio: "ignore",
    },
  );
  children.push(hb);
  return hb;
}

describe("a heartbeat killed (at MemoryMax) and restarted by systemd", () => {
  it("keeps its pool's health key the whole time: the new process registers before the old lease expires", async () => {
    const first = heartbeat();
    const deadline = Date.now() + 20_000;
    while ((await client.get(KEY).string()) === null) {
      if (Date.now() > deadline) throw new Error("the first heartbeat never registered");
      await sleep(100);
    }
    const oldLease = (await client.get(KEY).exec()).kvs[0]?.lease;
    // SIGKILL, as the kernel's OOM killer at MemoryMax; back after RestartSec=1
    first.kill("SIGKILL");
    const restartAt = Date.now() + 1_000;
    let restarted = false;
    const missing: number[] = [];
    // watch past the old lease's TTL (5 s): the key must never be absent
    while (Date.now() < restartAt + 8_000) {
      if (!restarted && Date.now() >= restartAt) {
        heartbeat();
        restarted = true;
      }
      if ((await client.get(KEY).string()) === null) missing.push(Date.now());
      await sleep(50);
    }
    expect(missing).toEqual([]);
    const now = (await client.get(KEY).exec()).kvs[0];
    expect(now?.lease).not.toBe(oldLease);
    expect(JSON.parse(now?.value.toString() ?? "{}").status).toBe("healthy");
  });
});
