import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { startNotifySocket } from "../helpers/notify-socket.js";

const ROOT = resolve(import.meta.dirname, "../..");
let etcd: EtcdServer;
const dir = mkdtempSync(join(tmpdir(), "heartbeat-notify-"));
beforeAll(async () => {
  etcd = await startEtcd();
});
afterAll(async () => {
  await etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((r) => child.once("exit", (code) => r(code)));
}

describe("edgectl heartbeat under a Type=notify unit with WatchdogSec", () => {
  it("edgectl heartbeat says READY=1 as its loop starts and pings the watchdog", async () => {
    const socket = await startNotifySocket();
    const hb = spawn(
      process.execPath,
      [resolve(ROOT, "bin/edgectl.js"), "heartbeat", "fra-1", "--ttl", "5"],
      {
        env: {
          PATH: process.env.PATH ?? "",
          ETCD_ENDPOINTS: etcd.endpoint,
          ROUTING_PREFIX: "/notify-test/",
          NOTIFY_SOCKET: socket.path,
          WATCHDOG_USEC: "1000000",
        },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    const exit = exited(hb);
    try {
      expect((await socket.waitFor((x) => x.fields.READY === "1", 30_000)).fields.STATUS).toBe(
        "heartbeat for fra-1",
      );
      await socket.waitFor((x) => x.fields.WATCHDOG === "1", 5_000);
      hb.kill("SIGTERM");
      expect(await exit).toBe(0);
      await socket.waitFor((x) => x.fields.STOPPING === "1", 5_000);
    } finally {
      hb.kill("SIGKILL");
      socket.close();
    }
  });
});
