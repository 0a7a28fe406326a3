import { createConnection, createServer, type Server, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Decides, from the head of a connection's first HTTP request (request line and headers, as
 * text), whether the connection is refused. Used to cut one etcd member off from its peers by the
 * `X-Server-From` header its peer requests carry.
 */
export type HeadFilter = (head: string) => boolean;

/**
 * A TCP proxy on 127.0.0.1 that tests can use to cut and refuse connections. It counts the bytes
 * flowing back to the client, so a test can cut right after the first batch of a catch-up.
 */
export interface TcpProxy {
  readonly port: number;
  readonly endpoint: string;
  /** Bytes sent to the client since the last `accept()` (or the start). */
  readonly downstreamBytes: number;
  /** Client connections open now. */
  readonly openConnections: number;
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
  /**
   * Refuses (closes) every connection whose first HTTP request head matches `filter`, and cuts the
   * open ones that match. Needs `inspectHeads`. Replaces any earlier filter.
   */
  block(filter: HeadFilter): void;
  /** Drops the `block()` filter. */
  unblock(): void;
  close(): Promise<void>;
}

/** Options of {@link startTcpProxy}. */
export interface TcpProxyOptions {
  /**
   * Holds each connection's client bytes until the head of its first HTTP request has arrived
   * (or 64 KiB, or a non-HTTP preface), so `block()` can judge it before anything reaches the target.
   */
  readonly inspectHeads?: boolean;
}

const maxHead = 64 * 1024;

/** Starts a proxy forwarding 127.0.0.1:<free port> to `127.0.0.1:targetPort`. */
export async function startTcpProxy(
  targetPort: number,
  opts: TcpProxyOptions = {},
): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const heads = new Map<Socket, string>();
  const clients = new Set<Socket>();
  let refusing = false;
  let filter: HeadFilter | undefined;
  let down = 0;
  const server: Server = createServer((client) => {
    if (refusing) {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection({ host: "127.0.0.1", port: targetPort });
    sockets.add(client);
    sockets.add(upstream);
    clients.add(client);
    const drop = () => {
      clients.delete(client);
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
      heads.delete(client);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    upstream.on("data", (d: Buffer) => {
      down += d.length;
    });
    upstream.pipe(client);
    if (!opts.inspectHeads) {
      client.pipe(upstream);
      return;
    }
    let held = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      held = Buffer.concat([held, d]);
      const end = held.indexOf("\r\n\r\n");
      if (end < 0 && held.length < maxHead) return;
      client.off("data", onData);
      const head = held.subarray(0, end < 0 ? held.length : end).toString("latin1");
      if (refusing || filter?.(head)) {
        client.resetAndDestroy();
        upstream.resetAndDestroy();
        return;
      }
      heads.set(client, head);
      upstream.write(held);
      client.pipe(upstream);
    };
    client.on("data", onData);
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
    heads.clear();
    clients.clear();
  };
  return {
    port,
    endpoint: `http://127.0.0.1:${port}`,
    get downstreamBytes() {
      return down;
    },
    get openConnections() {
      return clients.size;
    },
    async waitForBytes(bytes, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (down < bytes) {
        if (Date.now() > deadline) return false;
        await sleep(1);
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
    block: (f) => {
      if (!opts.inspectHeads) throw new Error("block() needs a proxy started with inspectHeads");
      filter = f;
      // Destroying a client fires its "close" handler, which also destroys its upstream.
      for (const [client, head] of heads) if (f(head)) client.resetAndDestroy();
    },
    unblock: () => {
      filter = undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        refusing = true;
        cut();
        server.close(() => resolve());
      }),
  };
}
