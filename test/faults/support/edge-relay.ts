import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * How the relay treats a request: `pass` forwards it; `down` drops the connection (the edge
 * unreachable); `slow` forwards it and holds the answer `slowMs` (an aggregator that takes longer
 * than the observer waits); `wrong-token` forwards it with another bearer token (the edge's
 * `OBSERVE_TOKEN` rotated, the observer's left behind); `no-aggregator` forwards it to the
 * second target (the same Worker without its Durable Object binding).
 */
export type RelayMode = "pass" | "down" | "slow" | "wrong-token" | "no-aggregator";

/** An HTTP relay on 127.0.0.1 between the observer (and `edgectl top`) and the edge in workerd. */
export interface EdgeRelay {
  readonly url: string;
  mode: RelayMode;
  close(): Promise<void>;
}

/** Starts the relay to `target` (and `noAggregator` for that mode), both `http://127.0.0.1:P`. */
export async function startEdgeRelay(
  target: string,
  noAggregator: string,
  opts: { readonly slowMs: number; readonly wrongToken: string },
): Promise<EdgeRelay> {
  const relay: { mode: RelayMode } = { mode: "pass" };
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const mode = relay.mode;
    if (mode === "down") {
      req.socket.destroy();
      return;
    }
    const to = new URL(req.url ?? "/", mode === "no-aggregator" ? noAggregator : target);
    const headers = { ...req.headers, host: to.host };
    if (mode === "wrong-token") headers.authorization = `Bearer ${opts.wrongToken}`;
    const up = request(to, { method: req.method, headers }, (answer) => {
      const send = () => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      };
      if (mode !== "slow") return send();
      const t = setTimeout(() => {
        timers.delete(t);
        send();
      }, opts.slowMs);
      timers.add(t);
    });
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get mode() {
      return relay.mode;
    },
    set mode(m: RelayMode) {
      relay.mode = m;
    },
    close: async () => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
