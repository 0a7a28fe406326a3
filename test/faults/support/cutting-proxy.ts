import { createConnection, createServer, type Socket } from "node:net";
import { sleep } from "./processes.js";

/**
 * A TCP proxy on 127.0.0.1 in front of etcd that counts the bytes flowing back to the client,
 * so a scenario can cut the connection right after the first batch of a catch-up arrives.
 */
export interface CuttingProxy {
  readonly endpoint: string;
  /** Bytes sent to the client since the last `accept()`. */
  readonly downstreamBytes: number;
  /** Refuse new connections and reset the open ones. */
  disconnect(): void;
  /** Forward new connections again and restart the byte count. */
  accept(): void;
  /** Reset every open connection (new ones are still accepted). */
  cut(): void;
  /** Resolves true once `bytes` have flowed to the client since `accept()`, false on timeout. */
  waitForBytes(bytes: number, timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Starts the proxy forwarding to `127.0.0.1:targetPort`. */
export async function startCuttingProxy(targetPort: number): Promise<CuttingProxy> {
  const sockets = new Set<Socket>();
  let refusing = false;
  let down = 0;
  const server = createServer((client) => {
    if (refusing) {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection({ host: "127.0.0.1", port: targetPort });
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    upstream.on("data", (d: Buffer) => {
      down += d.length;
    });
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const cut = () => {
    for (const s of sockets) s.resetAndDestroy();
    sockets.clear();
  };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get downstreamBytes() {
      return down;
    },
    disconnect() {
      refusing = true;
      cut();
    },
    accept() {
      down = 0;
      refusing = false;
    },
    cut,
    async waitForBytes(bytes, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (down < bytes) {
        if (Date.now() > deadline) return false;
        await sleep(1);
      }
      return true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        refusing = true;
        cut();
        server.close(() => resolve());
      }),
  };
}
