import type { Server } from "node:http";
import { listenGuarded } from "../adapters/guarded-listener.js";
import type { PusherMetrics } from "./metrics.js";
import { writeMetrics } from "./metrics-response.js";
import type { PusherStatus } from "./status.js";
import type { UiHandler } from "./ui/ui-handler.js";

/** A listening status server. */
export interface StatusServer {
  readonly server: Server;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves `/livez`, `/readyz` (and `/healthz`, the same), `/status` and `/metrics` on `host:port`
 * (port 0 picks a free one). `/livez` answers from the event loop alone, so it is 200 whenever the
 * process can answer at all: an etcd or KV outage never fails it (restart probes must not restart
 * a pusher that is only waiting for etcd). A request whose `Host` is not a name of the listener
 * (see {@link HostAllowList}; `allowedHosts` adds names) is answered 421 (docs/reference.md §5).
 */
export async function startStatusServer(opts: {
  readonly host: string;
  readonly port: number;
  readonly status: PusherStatus;
  readonly metrics: PusherMetrics;
  /** The routing map under `/ui` (docs/reference.md §8); without it `/ui` is 404. */
  readonly ui?: UiHandler;
  /** Host names answered besides the listener's own (`PUSHER_ALLOWED_HOSTS`). */
  readonly allowedHosts?: readonly string[];
}): Promise<StatusServer> {
  const { status, metrics } = opts;
  const { server, port } = await listenGuarded(
    (req, res) => {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      const json = (code: number, body: unknown) => {
        res.writeHead(code, { "content-type": "application/json", "cache-control": "no-store" });
        res.end(`${JSON.stringify(body)}\n`);
      };
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { allow: "GET, HEAD" }).end();
        return;
      }
      if (path === "/livez") {
        json(200, { ok: true, uptime_s: Math.round(process.uptime()) });
      } else if (path === "/readyz" || path === "/healthz") {
        const h = status.health();
        json(h.ok ? 200 : 503, { ok: h.ok, role: status.role, reasons: h.reasons });
      } else if (path === "/status") {
        json(200, status.document());
      } else if (path === "/metrics") {
        void writeMetrics(metrics.registry, res, () => json(500, { error: "metrics unavailable" }));
      } else if (!opts.ui?.serve(req, res, path)) {
        json(404, { error: "not found" });
      }
    },
    {
      host: opts.host,
      port: opts.port,
      ...(opts.allowedHosts ? { allowedHosts: opts.allowedHosts } : {}),
      setting: "PUSHER_ALLOWED_HOSTS",
    },
  );
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
