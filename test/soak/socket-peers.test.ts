import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { parseTcpTable, socketPeers } from "../../soak/socket-peers.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe("parseTcpTable", () => {
  it("reads ports, state and inode of each line, skipping the header and inode 0", () => {
    const text = [
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
      "   0: 0100007F:0BB8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0 100 0 0 10 0",
      "   1: 0100007F:0BB8 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0 20 4 30 10 -1",
      "   2: 0100007F:D432 0100007F:0BB8 06 00000000:00000000 03:00000DB4 00000000     0        0 0 3",
    ].join("\n");
    const table = parseTcpTable(text);
    expect([...table]).toEqual([
      [4242, { localPort: 3000, remotePort: 0, state: "0A" }],
      [4343, { localPort: 3000, remotePort: 54321, state: "01" }],
    ]);
  });
});

describe("socketPeers", () => {
  it("names the process at the other end of each loopback connection, and a half-closed one", async () => {
    const accepted: Socket[] = [];
    const server = createServer({ allowHalfOpen: true }, (s) => accepted.push(s));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    cleanups.push(() => {
      for (const s of accepted) s.destroy();
      server.close();
    });
    const port = (server.address() as { port: number }).port;
    const other = createServer((s) => accepted.push(s));
    other.listen(0, "127.0.0.1");
    await once(other, "listening");
    cleanups.push(() => other.close());
    const otherPort = (other.address() as { port: number }).port;
    // Two connections that stay, one that ends its side (ours is then in CLOSE_WAIT), and one to
    // a port other than the client port.
    const child = spawn(
      process.execPath,
      [
        "-e",
        `const net = require("node:net");
         const a = net.connect(${port}, "127.0.0.1");
         const b = net.connect(${port}, "127.0.0.1");
         const c = net.connect(${port}, "127.0.0.1", () => c.end());
         const d = net.connect(${otherPort}, "127.0.0.1");
         setInterval(() => {}, 1000);`,
      ],
      { stdio: "ignore" },
    );
    cleanups.push(() => child.kill("SIGKILL"));
    const deadline = Date.now() + 10_000;
    while (accepted.length < 4 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(accepted).toHaveLength(4);
    await new Promise((r) => setTimeout(r, 200));

    const label = (pid: number) => (pid === child.pid ? "client" : "someone-else");
    const all = (await socketPeers([{ pid: process.pid }], label)).get(process.pid);
    expect(all?.get("client")).toBe(3);
    expect(all?.get("peer")).toBeUndefined();
    const counts = (await socketPeers([{ pid: process.pid, clientPort: port }], label)).get(
      process.pid,
    );
    expect(counts?.get("client")).toBe(2);
    expect(counts?.get("peer")).toBe(1);
    expect(counts?.get("close-wait")).toBe(1);
    expect(counts?.get("listen")).toBeGreaterThanOrEqual(1);
    expect(counts?.get("other")).toBeGreaterThan(0);

    child.kill("SIGKILL");
    await once(child, "exit");
    await new Promise((r) => setTimeout(r, 200));
    const after = (await socketPeers([{ pid: process.pid }], label)).get(process.pid);
    expect(after?.get("client")).toBeUndefined();
    expect(after?.get("close-wait")).toBeGreaterThanOrEqual(3);
    expect(after?.get("gone")).toBeUndefined();
  });
});
