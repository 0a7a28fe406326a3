import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A running demo origin. */
export interface DemoOrigin {
  readonly pool: string;
  readonly port: number;
  readonly url: string;
  /** Whether `/healthz` currently answers 200. */
  healthy: boolean;
  /** `/vod/` requests answered so far (what the edge cache saves shows here). */
  readonly vodServed: number;
  /** Closes the listening socket and every open connection (the port refuses from then on). */
  close(): Promise<void>;
}

/** Options for {@link startDemoOrigin}. */
export interface DemoOriginOptions {
  readonly pool: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly host?: string;
  /** Called with one short line per proxied request (not for `/healthz`). */
  readonly onRequest?: (line: string) => void;
}

function edgeHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith("x-edge-") && value !== undefined) {
      out[name] = Array.isArray(value) ? value.join(", ") : value;
    }
  }
  return out;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  res.end(text);
}

/**
 * Starts an origin that answers every request with its pool name, the request path and the
 * `X-Edge-*` headers it received. `GET /healthz` is the health check `edgectl heartbeat` polls;
 * `POST /__demo/health/down` and `/__demo/health/up` flip it, to try health-driven failover.
 * `/vod/…` answers as a video origin does for a segment: the same bytes from every pool,
 * cacheable for an hour (docs/caching.md), counted in `vodServed`.
 */
export async function startDemoOrigin(opts: DemoOriginOptions): Promise<DemoOrigin> {
  const host = opts.host ?? "127.0.0.1";
  const state = { healthy: true, vod: 0 };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://origin.invalid");
    if (url.pathname === "/healthz") {
      send(res, state.healthy ? 200 : 503, { ok: state.healthy, pool: opts.pool });
      return;
    }
    if (req.method === "POST" && url.pathname.startsWith("/__demo/health/")) {
      state.healthy = url.pathname.endsWith("/up");
      send(res, 200, { ok: true, pool: opts.pool, healthy: state.healthy });
      return;
    }
    if (url.pathname.startsWith("/vod/")) {
      state.vod += 1;
      req.resume();
      const body = `segment ${url.pathname}\n`;
      res.writeHead(200, {
        "content-type": "video/mp2t",
        "content-length": Buffer.byteLength(body),
        "cache-control": "public, max-age=3600",
      });
      res.end(body);
      return;
    }
    const headers = edgeHeaders(req);
    opts.onRequest?.(
      `${req.method} ${url.pathname}${url.search} country=${headers["x-edge-country"] ?? "-"} rev=${headers["x-edge-revision"] ?? "-"}`,
    );
    // Drain the body so keep-alive connections stay usable.
    req.resume();
    req.on("end", () =>
      send(res, 200, {
        pool: opts.pool,
        method: req.method,
        path: url.pathname,
        query: url.search,
        headers,
      }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    pool: opts.pool,
    port,
    url: `http://${host}:${port}`,
    get healthy() {
      return state.healthy;
    },
    set healthy(v: boolean) {
      state.healthy = v;
    },
    get vodServed() {
      return state.vod;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
