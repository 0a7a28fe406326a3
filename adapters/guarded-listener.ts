import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { HostAllowList } from "./host-allow-list.js";

/** Where a guarded listener listens, and who else it answers. */
export interface GuardedListenerOptions {
  readonly host: string;
  readonly port: number;
  /** Host names answered besides the listener's own. */
  readonly allowedHosts?: readonly string[];
  /** The setting that adds names (`PUSHER_ALLOWED_HOSTS`, `--allowed-hosts`), named in a 421. */
  readonly setting: string;
}

/**
 * Starts an HTTP server on `host:port` whose `handler` sees only requests with one of the
 * listener's own `Host` names ({@link HostAllowList}); others get 421. Resolves once bound.
 */
export async function listenGuarded(
  handler: RequestListener,
  o: GuardedListenerOptions,
): Promise<{ readonly server: Server; readonly port: number }> {
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
    handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  hosts = new HostAllowList({
    listenHost: o.host,
    boundAddress: bound.address,
    extra: o.allowedHosts ?? [],
    setting: o.setting,
  });
  return { server, port: bound.port };
}
