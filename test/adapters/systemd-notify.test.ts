import { afterEach, describe, expect, it } from "vitest";
import { serviceNotifier } from "../../adapters/systemd-notify.js";
import { type NotifySocket, startNotifySocket } from "../helpers/notify-socket.js";

let socket: NotifySocket | undefined;
afterEach(() => socket?.close());

const PATH = process.env.PATH ?? "";

describe("serviceNotifier (sd_notify through systemd-notify, against a real socket)", () => {
  it("sends READY=1 with a status, then a WATCHDOG=1 every half WATCHDOG_USEC, and STOPPING=1", async () => {
    socket = await startNotifySocket();
    const n = serviceNotifier(
      { PATH, NOTIFY_SOCKET: socket.path, WATCHDOG_USEC: "400000", WATCHDOG_PID: "42" },
      { pid: 42 },
    );
    expect(n.enabled).toBe(true);
    expect(n.pingMs).toBe(200);
    n.ready("listening on 127.0.0.1:9464");
    const ready = await socket.waitFor((x) => x.fields.READY === "1", 5_000);
    expect(ready.fields.STATUS).toBe("listening on 127.0.0.1:9464");
    await socket.waitFor((x) => x.fields.WATCHDOG === "1", 5_000);
    n.stopping();
    await socket.waitFor((x) => x.fields.STOPPING === "1", 5_000);
    // a ping already on its way may land after STOPPING; none is sent after it
    await new Promise((r) => setTimeout(r, 300));
    const pings = socket.received.filter((x) => x.fields.WATCHDOG === "1").length;
    await new Promise((r) => setTimeout(r, 600));
    expect(socket.received.filter((x) => x.fields.WATCHDOG === "1").length).toBe(pings);
  });

  it("misses its pings while the event loop is blocked, which is what lets systemd restart it", async () => {
    socket = await startNotifySocket();
    const n = serviceNotifier(
      { PATH, NOTIFY_SOCKET: socket.path, WATCHDOG_USEC: "200000" },
      { pid: 1 },
    );
    n.ready("up");
    await socket.waitFor((x) => x.fields.WATCHDOG === "1", 5_000);
    const blockedFrom = Date.now();
    while (Date.now() - blockedFrom < 1_500) {
      // a hung event loop: no timer runs
    }
    const blockedTo = Date.now();
    await socket.waitFor((x) => x.fields.WATCHDOG === "1" && x.at > blockedTo, 5_000);
    n.stopping();
    const during = socket.received.filter(
      (x) => x.fields.WATCHDOG === "1" && x.at > blockedFrom + 250 && x.at < blockedTo,
    );
    expect(during).toEqual([]);
  });

  it("does nothing outside a notify unit, and pings no watchdog meant for another process", () => {
    const sent: string[][] = [];
    const send = (a: readonly string[]) => {
      sent.push([...a]);
    };
    const off = serviceNotifier({ PATH, WATCHDOG_USEC: "400000" }, { pid: 7, send });
    off.ready("up");
    off.stopping();
    expect(off.enabled).toBe(false);
    expect(sent).toEqual([]);
    const other = serviceNotifier(
      { PATH, NOTIFY_SOCKET: "/run/x", WATCHDOG_USEC: "400000", WATCHDOG_PID: "8" },
      { pid: 7, send },
    );
    expect(other.pingMs).toBeNull();
    other.ready("up");
    expect(sent).toEqual([["READY=1", "STATUS=up"]]);
  });
});
