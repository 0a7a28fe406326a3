import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 that tests can use to cut and refuse connections. It counts the bytes
 * flowing back to the client, so a test can cut right after the first batch of a catch-up.
 */
export interface TcpProxy {
  readonly port: number;
  readonly endpoint: string;
  /** Bytes sent to the client since the last `accept()` (or the start). */
  readonly downstreamBytes: number;
  /** Resolves true once `bytes` have flowed to the client since `accept()`, false on timeout. */
  waitForBytes(bytes: number, timeoutMs: number): Promise<boolean>;
  /** Destroys every open connection (both sides). */
  cut(): void;
  /** New connections are accepted and closed at once (a reset), until `accept()`. */
  refuse(): void;
  /** New connections are forwarded again, and the byte count restarts. */
  accept(): void;
  /** `refuse()` + `cut()`. */
  disconnect(): void;
  close(): Promise<void>;
}

/** Starts a proxy forwarding 127.0.0.1:<free port> to `127.0.0.1:targetPort`. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let refusing = false;
  let down = 0;
  const server: Server = createServer((client) => {
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
    port,
    endpoint: `http://127.0.0.1:${port}`,
    get downstreamBytes() {
      return down;
    },
    async waitForBytes(bytes, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (down < bytes) {
        if (Date.now() > deadline) return false;
        await new Promise((r) => setTimeout(r, 1));
      }
      return true;
    },
    cut,
    refuse: () => {
      refusing = true;
    },
    accept: () => {
      down = 0;
      refusing = false;
    },
    disconnect: () => {
      refusing = true;
      cut();
    },
    close: () =>
      new Promise<void>((resolve) => {
        refusing = true;
        cut();
        server.close(() => resolve());
      }),
  };
}
