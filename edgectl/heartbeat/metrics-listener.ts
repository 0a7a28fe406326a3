import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/** A listening `/metrics` endpoint. */
export interface MetricsListener {
  readonly port: number;
  close(): Promise<void>;
}

/** Serves `GET /metrics` (Prometheus text) from `registry` on `host:port`; anything else is 404. */
export async function startMetricsListener(opts: {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
}): Promise<MetricsListener> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
    } else if (path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: try /metrics\n");
    } else {
      opts.registry.metrics().then(
        (text) => {
          res.writeHead(200, { "content-type": opts.registry.contentType });
          res.end(req.method === "HEAD" ? undefined : text);
        },
        () => res.writeHead(500).end(),
      );
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
