import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { freePort } from "../../testkit/ports.js";
import { startNotifySocket } from "../helpers/notify-socket.js";

const ROOT = resolve(import.meta.dirname, "../..");
let etcd: EtcdServer;
const dir = mkdtempSync(join(tmpdir(), "service-notify-"));
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

describe("the pusher under a Type=notify unit with WatchdogSec", () => {
  it("the pusher says READY=1 once it listens, pings the watchdog, and STOPPING=1 on SIGTERM", async () => {
    const socket = await startNotifySocket();
    const port = await freePort();
    const pusher = spawn(process.execPath, [resolve(ROOT, "bin/edge-pusher.js")], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? "",
        ETCD_ENDPOINTS: etcd.endpoint,
        ROUTING_PREFIX: "/notify-test/",
        PUSHER_ELECTION_KEY: "/notify-test-leader",
        KV_SINK: "local",
        KV_LOCAL_PERSIST: join(dir, "state"),
        KV_NAMESPACE_ID: "notify-test",
        PUSHER_LISTEN: `127.0.0.1:${port}`,
        NOTIFY_SOCKET: socket.path,
        WATCHDOG_USEC: "1000000",
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const exit = exited(pusher);
    try {
      const ready = await socket.waitFor((x) => x.fields.READY === "1", 30_000);
      expect(ready.fields.STATUS).toBe(`listening on 127.0.0.1:${port}`);
      expect((await fetch(`http://127.0.0.1:${port}/livez`)).status).toBe(200);
      await socket.waitFor((x) => x.fields.WATCHDOG === "1", 5_000);
      pusher.kill("SIGTERM");
      expect(await exit).toBe(0);
      await socket.waitFor((x) => x.fields.STOPPING === "1", 5_000);
    } finally {
      pusher.kill("SIGKILL");
      socket.close();
    }
  });
});
