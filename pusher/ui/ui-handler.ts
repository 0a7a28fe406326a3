import type { IncomingMessage, ServerResponse } from "node:http";
import { Gauge, type Registry } from "prom-client";
import type { PusherStatus } from "../status.js";
import type { RoutingView } from "./routing-view.js";
import { loadUiAssets, type UiAssets } from "./ui-assets.js";
import type { UiData } from "./ui-document.js";
import { MAX_UI_STREAM_CLIENTS, UiEventStream } from "./ui-event-stream.js";
import { UI_SECURITY_HEADERS } from "./ui-headers.js";

/** Serves the routing map under `/ui` on the pusher's status listener. */
export interface UiHandler {
  /**
   * Answers a GET or HEAD for a `/ui` path and returns true; returns false (and writes nothing)
   * for any other path.
   */
  serve(req: IncomingMessage, res: ServerResponse, path: string): boolean;
  /** Ends the open event streams. */
  close(): void;
}

/** What the page shows: the pusher's status and its last compiled map. */
export interface UiHandlerOptions {
  readonly status: PusherStatus;
  readonly routing: RoutingView;
  /** Default: the files in this directory. */
  readonly assets?: UiAssets;
  /** Where `edge_pusher_ui_streams` (the open `/ui/events` streams) is registered, if anywhere. */
  readonly registry?: Registry;
}

/**
 * `/ui` (the page), `/ui/app.js`, `/ui/app.css`, `/ui/favicon.svg`, `/ui/data` (JSON: the
 * `/status` document and the compiled map without origins) and `/ui/events` (the same, live).
 * It exposes nothing `/status` does not already show, on the same listener: put it on loopback
 * or behind the same access control.
 */
export function createUiHandler(o: UiHandlerOptions): UiHandler {
  let assets = o.assets ?? null;
  const events = new UiEventStream({ status: o.status, routing: o.routing });
  if (o.registry) {
    new Gauge({
      name: "edge_pusher_ui_streams",
      help: `open /ui/events streams (at most ${MAX_UI_STREAM_CLIENTS})`,
      registers: [o.registry],
      collect() {
        this.set(events.size);
      },
    });
  }
  const send = (res: ServerResponse, head: boolean, code: number, type: string, body: Buffer) => {
    res.writeHead(code, {
      ...UI_SECURITY_HEADERS,
      "content-type": type,
      "content-length": String(body.byteLength),
      // Live data is never cached; the page's files are revalidated (they change on upgrade).
      "cache-control": type === "application/json" ? "no-store" : "no-cache",
    });
    res.end(head ? undefined : body);
  };
  return {
    serve(req, res, path) {
      if (path !== "/ui" && !path.startsWith("/ui/")) return false;
      const head = req.method === "HEAD";
      if (path === "/ui/events") {
        if (head) send(res, true, 200, "text/event-stream; charset=utf-8", Buffer.alloc(0));
        else events.attach(res);
        return true;
      }
      if (path === "/ui/data") {
        const data: UiData = { status: o.status.document(), map: o.routing.map() };
        send(res, head, 200, "application/json", Buffer.from(`${JSON.stringify(data)}\n`));
        return true;
      }
      assets ??= loadUiAssets();
      const asset = assets.get(path === "/ui/" ? "/ui" : path);
      if (asset) send(res, head, 200, asset.type, asset.body);
      else send(res, head, 404, "application/json", Buffer.from('{"error":"not found"}\n'));
      return true;
    },
    close: () => events.close(),
  };
}
