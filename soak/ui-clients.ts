import { setTimeout as sleep } from "node:timers/promises";

/** What one `/ui/events` tab saw. */
export interface UiTab {
  /** Streams opened (200) and refused or failed to open. */
  opened: number;
  failed: number;
  /** Events received, all streams together. */
  maps: number;
  statuses: number;
  pings: number;
  /** The longest wait between two events of one stream, ms (pings come every 5 s). */
  maxGapMs: number;
  /** Why a stream ended before the tab closed it, the first time it happened. */
  endedEarly: string | null;
}

/** Operators' `/ui` tabs on one pusher's listener. */
export interface UiClients {
  /** Held open the whole run. */
  readonly held: UiTab;
  /** Closed and opened again every `reloadEveryMs`, as a tab reloaded. */
  readonly reloaded: UiTab;
  /** Closes both tabs; resolves once their streams are read to the end. */
  stop(): Promise<void>;
}

function newTab(): UiTab {
  return {
    opened: 0,
    failed: 0,
    maps: 0,
    statuses: 0,
    pings: 0,
    maxGapMs: 0,
    endedEarly: null,
  };
}

/** Reads one stream until `signal` aborts it, counting its events into `tab`. */
async function readStream(url: string, tab: UiTab, signal: AbortSignal): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { signal });
  } catch (e) {
    if (!signal.aborted) tab.failed += 1;
    if (!signal.aborted) tab.endedEarly ??= `no answer: ${String(e)}`;
    return;
  }
  if (res.status !== 200 || !res.body) {
    tab.failed += 1;
    tab.endedEarly ??= `answered ${res.status}`;
    await res.body?.cancel();
    return;
  }
  tab.opened += 1;
  const decoder = new TextDecoder();
  let text = "";
  let last = Date.now();
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      let end = text.indexOf("\n\n");
      while (end >= 0) {
        const event = /^event: (\w+)$/m.exec(text.slice(0, end))?.[1];
        text = text.slice(end + 2);
        end = text.indexOf("\n\n");
        if (!event) continue;
        const now = Date.now();
        tab.maxGapMs = Math.max(tab.maxGapMs, now - last);
        last = now;
        if (event === "map") tab.maps += 1;
        else if (event === "status") tab.statuses += 1;
        else if (event === "ping") tab.pings += 1;
      }
    }
    if (!signal.aborted) tab.endedEarly ??= "the pusher ended the stream";
  } catch (e) {
    if (!signal.aborted) tab.endedEarly ??= `read failed: ${String(e)}`;
  }
}

/**
 * Opens two `/ui/events` tabs on the pusher at `base`: one held for the whole run, one reloaded
 * every `reloadEveryMs`.
 */
export function startUiClients(base: string, reloadEveryMs = 60_000): UiClients {
  const url = `${base}/ui/events`;
  const held = newTab();
  const reloaded = newTab();
  const stop = new AbortController();
  const heldRun = readStream(url, held, stop.signal);
  const reloadRun = (async () => {
    while (!stop.signal.aborted) {
      const tab = new AbortController();
      const both = AbortSignal.any([tab.signal, stop.signal]);
      const reading = readStream(url, reloaded, both);
      await sleep(reloadEveryMs, undefined, { signal: stop.signal }).catch(() => undefined);
      tab.abort();
      await reading;
    }
  })();
  return {
    held,
    reloaded,
    async stop() {
      stop.abort();
      await Promise.all([heldRun, reloadRun]);
    },
  };
}
