import type { ServerResponse } from "node:http";
import type { PusherStatus } from "../status.js";
import type { RoutingView } from "./routing-view.js";
import { UI_SECURITY_HEADERS } from "./ui-headers.js";

/** Timings of the stream (tests shorten nothing: these are the production values). */
export interface UiEventStreamOptions {
  readonly status: PusherStatus;
  readonly routing: RoutingView;
  /** How often `/status` is compared with what was last sent (it changes without a compile). */
  readonly statusCheckMs?: number;
  /** A `ping` this often lets the page tell a silent (hung) pusher from a quiet one. */
  readonly pingMs?: number;
}

/** A client that has not read this much is dropped (its browser reconnects and gets it all). */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/**
 * Open `/ui/events` streams at most: a handful of operators' tabs fit many times over, while each
 * stream holds a socket and a copy of every event, so a runaway page (or anything that reaches
 * the listener) cannot pile them up. One more is answered 503 with `reason: ui-stream-limit`.
 */
export const MAX_UI_STREAM_CLIENTS = 32;

/** What one open stream was last sent: each client is compared with its own copy. */
interface StreamClient {
  lastStatus: string;
}

/**
 * `/ui/events`: server-sent events. Each client gets the current `map` and `status` at once, then
 * a `map` event on every compile (sent as it happens: the page follows pushes within 2 s), a
 * `status` event whenever the `/status` document changes (checked every 250 ms) and a `ping`
 * every 5 s. Timers run only while a client is connected. Each client is compared with what it
 * was sent, and at most {@link MAX_UI_STREAM_CLIENTS} are open at once.
 */
export class UiEventStream {
  private readonly clients = new Map<ServerResponse, StreamClient>();
  private readonly statusCheckMs: number;
  private readonly pingMs: number;
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly o: UiEventStreamOptions) {
    this.statusCheckMs = o.statusCheckMs ?? 250;
    this.pingMs = o.pingMs ?? 5_000;
  }

  /** Number of connected clients. */
  get size(): number {
    return this.clients.size;
  }

  /**
   * Takes over `res` as an event stream until the client goes away; with
   * {@link MAX_UI_STREAM_CLIENTS} streams open it answers 503 instead (the page retries).
   */
  attach(res: ServerResponse): void {
    if (this.clients.size >= MAX_UI_STREAM_CLIENTS) {
      const body = `${JSON.stringify({
        error: `too many /ui/events streams open (at most ${MAX_UI_STREAM_CLIENTS})`,
        reason: "ui-stream-limit",
      })}\n`;
      res.writeHead(503, {
        ...UI_SECURITY_HEADERS,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
        "cache-control": "no-store",
        "retry-after": "5",
      });
      res.end(body);
      return;
    }
    res.writeHead(200, {
      ...UI_SECURITY_HEADERS,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    });
    res.socket?.setNoDelay(true);
    res.write("retry: 1000\n\n");
    res.write(this.frame("map", this.mapJson()));
    const client: StreamClient = { lastStatus: this.statusJson() };
    res.write(this.frame("status", client.lastStatus));
    this.clients.set(res, client);
    res.on("close", () => {
      this.clients.delete(res);
      if (this.clients.size === 0) this.stopTimers();
    });
    if (this.clients.size === 1) this.startTimers();
  }

  /** Ends every stream (the server is closing). */
  close(): void {
    for (const res of this.clients.keys()) res.end();
    this.clients.clear();
    this.stopTimers();
  }

  private startTimers(): void {
    this.unsubscribe = this.o.routing.subscribe(() => this.broadcast("map", this.mapJson()));
    const check = setInterval(() => {
      const status = this.statusJson();
      const text = this.frame("status", status);
      for (const [res, client] of this.clients) {
        if (client.lastStatus === status) continue;
        client.lastStatus = status;
        this.send(res, text);
      }
    }, this.statusCheckMs);
    const ping = setInterval(() => this.broadcast("ping", String(Date.now())), this.pingMs);
    for (const t of [check, ping]) t.unref();
    this.timers = [check, ping];
  }

  private stopTimers(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  private mapJson(): string {
    return JSON.stringify(this.o.routing.map());
  }

  private statusJson(): string {
    return JSON.stringify(this.o.status.document());
  }

  private frame(event: string, data: string): string {
    // JSON has no raw newlines, so one `data:` line carries it.
    return `event: ${event}\ndata: ${data}\n\n`;
  }

  private broadcast(event: string, data: string): void {
    const text = this.frame(event, data);
    for (const res of this.clients.keys()) this.send(res, text);
  }

  private send(res: ServerResponse, text: string): void {
    if (res.writableLength > MAX_BUFFERED_BYTES) res.destroy();
    else res.write(text);
  }
}
