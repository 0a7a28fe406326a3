import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { startNotifySocket } from "../helpers/notify-socket.js";
import { ObservationsEdge } from "../helpers/observations-edge.js";

const ROOT = resolve(import.meta.dirname, "../..");
let etcd: EtcdServer;
beforeAll(async () => {
  etcd = await startEtcd();
});
afterAll(async () => {
  await etcd?.stop();
});

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((r) => child.once("exit", (code) => r(code)));
}

describe("edgectl observe under a Type=notify unit with WatchdogSec", () => {
  it("says READY=1 as its loop starts, pings the watchdog, and STOPPING=1 on SIGTERM", async () => {
    const socket = await startNotifySocket();
    const edge = await new ObservationsEdge("obs-token").start();
    const observer = spawn(
      process.execPath,
      [resolve(ROOT, "bin/edgectl.js"), "observe", "--edge", edge.url, "--interval", "0.5"],
      {
        env: {
          PATH: process.env.PATH ?? "",
          ETCD_ENDPOINTS: etcd.endpoint,
          ROUTING_PREFIX: "/observe-notify/",
          OBSERVE_TOKEN: "obs-token",
          NOTIFY_SOCKET: socket.path,
          WATCHDOG_USEC: "1000000",
        },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    const exit = exited(observer);
    try {
      const ready = await socket.waitFor((x) => x.fields.READY === "1", 30_000);
      expect(ready.fields.STATUS).toBe(`observing ${new URL(edge.url).origin}`);
      await socket.waitFor((x) => x.fields.WATCHDOG === "1", 5_000);
      observer.kill("SIGTERM");
      expect(await exit).toBe(0);
      await socket.waitFor((x) => x.fields.STOPPING === "1", 5_000);
    } finally {
      observer.kill("SIGKILL");
      socket.close();
      await edge.stop();
    }
  });
});
