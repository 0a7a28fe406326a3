import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { HostAllowList } from "../../adapters/host-allow-list.js";

/** A listening `/metrics` endpoint. */
export interface MetricsListener {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus text) from `registry` on `host:port`; anything else is 404. A
 * request whose `Host` is not a name of the listener ({@link HostAllowList}; `allowedHosts` adds
 * names) is answered 421.
 */
export async function startMetricsListener(opts: {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
  /** Host names answered besides the listener's own (`--allowed-hosts`). */
  readonly allowedHosts?: readonly string[];
}): Promise<MetricsListener> {
  let hosts: HostAllowList | null = null;
  const server = createServer((req, res) => {
    // `hosts` is set as soon as the listener is bound, before any request is read.
    if (!hosts) {
      res.writeHead(503).end();
      return;
    }
    if (!hosts.allows(req.headers.host)) {
      hosts.refuse(res);
      return;
    }
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
  const bound = server.address() as AddressInfo;
  hosts = new HostAllowList({
    listenHost: opts.host,
    boundAddress: bound.address,
    extra: opts.allowedHosts ?? [],
    setting: "--allowed-hosts",
  });
  return {
    port: bound.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
