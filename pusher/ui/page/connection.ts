import type { StatusDocument } from "../../status.js";
import type { UiMap } from "../ui-document.js";

/** What the page learns from the pusher's event stream. */
export interface ConnectionHandlers {
  onMap(map: UiMap | null): void;
  onStatus(status: StatusDocument): void;
  /** `live` after any event; `lost` (with when it was lost) on an error or a silent stream. */
  onState(state: "live" | "lost", since: Date | null): void;
}

/** Timings of the connection. */
export interface ConnectionOptions {
  /** No event (the pusher pings every 5 s) for this long means the pusher is lost. */
  readonly silentMs: number;
  /** Wait before opening a new stream after the browser gave one up. */
  readonly reopenMs: number;
}

/**
 * Follows `/ui/events` (server-sent events: `map`, `status`, `ping`). The browser reconnects by
 * itself after a dropped stream; a stream it gave up on (an HTTP error) or one gone silent (a
 * hung pusher keeps the socket open) is replaced. Either way the page says it lost the pusher.
 */
export function connect(url: string, handlers: ConnectionHandlers, o: ConnectionOptions): void {
  let source: EventSource | null = null;
  let lastEventAt = Date.now();
  let state: "connecting" | "live" | "lost" = "connecting";
  let reopenTimer: number | undefined;

  const lost = () => {
    if (state === "lost") return;
    state = "lost";
    handlers.onState("lost", new Date());
  };
  const alive = () => {
    lastEventAt = Date.now();
    if (state === "live") return;
    state = "live";
    handlers.onState("live", null);
  };
  const parse = <T>(e: Event, use: (v: T) => void) => {
    alive();
    try {
      use(JSON.parse((e as MessageEvent<string>).data) as T);
    } catch {
      // A torn message: the next one (or the reconnect's full state) replaces it.
    }
  };
  const open = () => {
    source?.close();
    lastEventAt = Date.now();
    const s = new EventSource(url);
    source = s;
    s.addEventListener("map", (e) => parse<UiMap | null>(e, handlers.onMap));
    s.addEventListener("status", (e) => parse<StatusDocument>(e, handlers.onStatus));
    s.addEventListener("ping", () => alive());
    s.addEventListener("error", () => {
      lost();
      if (s.readyState === EventSource.CLOSED) {
        window.clearTimeout(reopenTimer);
        reopenTimer = window.setTimeout(open, o.reopenMs);
      }
    });
  };
  window.setInterval(() => {
    if (Date.now() - lastEventAt > o.silentMs) {
      lost();
      open();
    }
  }, 1_000);
  open();
}
