import type { Registry } from "prom-client";
import { listenGuarded } from "../adapters/guarded-listener.js";

/** A listening `/metrics` endpoint. */
export interface MetricsListener {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus text) from `registry` on `host:port`, and each path of
 * `documents` as the JSON its function returns (the observer's `/status`); anything else is 404. A
 * request whose `Host` is not a name of the listener ({@link HostAllowList}; `allowedHosts` adds
 * names) is answered 421.
 */
export async function startMetricsListener(opts: {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
  /** Host names answered besides the listener's own (`--allowed-hosts`). */
  readonly allowedHosts?: readonly string[];
  /** Paths answered with a JSON document, e.g. `{"/status": () => status.document()}`. */
  readonly documents?: Readonly<Record<string, () => unknown>>;
  /**
   * Called once each `/metrics` answer is written: rendering the text leaves garbage of a few
   * times its size, a cue for the owner's idle heap trim.
   */
  readonly scraped?: () => void;
}): Promise<MetricsListener> {
  const { server, port } = await listenGuarded(
    (req, res) => {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { allow: "GET, HEAD" }).end();
      } else if (opts.documents && Object.hasOwn(opts.documents, path)) {
        const body = `${JSON.stringify(opts.documents[path]?.())}\n`;
        res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
        res.end(req.method === "HEAD" ? undefined : body);
      } else if (path !== "/metrics") {
        res.writeHead(404, { "content-type": "text/plain" }).end("not found: try /metrics\n");
      } else {
        opts.registry.metrics().then(
          (text) => {
            res.writeHead(200, { "content-type": opts.registry.contentType });
            res.end(req.method === "HEAD" ? undefined : text, () => opts.scraped?.());
          },
          () => res.writeHead(500).end(),
        );
      }
    },
    {
      host: opts.host,
      port: opts.port,
      ...(opts.allowedHosts ? { allowedHosts: opts.allowedHosts } : {}),
      setting: "--allowed-hosts",
    },
  );
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
