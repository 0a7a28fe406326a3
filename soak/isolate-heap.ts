/**
 * The V8 heap of one Worker isolate in workerd, read over its inspector (the Chrome DevTools
 * Protocol): the Worker's own memory, apart from workerd's and the local runtime's.
 */
export interface IsolateHeap {
  /**
   * Heap used right after a full collection (`HeapProfiler.collectGarbage`, then
   * `Runtime.getHeapUsage`), MiB: what the isolate keeps, not the garbage it has not yet
   * collected (which grows by about 1 KB a request between V8's own collections). workerd
   * answers the collection only while the isolate serves requests; null when either call
   * gets no answer within 5 s.
   */
  usedAfterGcMiB(): Promise<number | null>;
  close(): void;
}

/** Connects to the inspector of worker `name` on `port` (Miniflare's `core:user:NAME`). */
export async function openIsolateHeap(port: number, name: string): Promise<IsolateHeap> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/core:user:${name}`);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve(), { once: true });
    ws.addEventListener("error", () => reject(new Error(`no inspector for ${name} on ${port}`)), {
      once: true,
    });
  });
  let nextId = 0;
  type Result = { usedSize?: number } | undefined;
  const pending = new Map<number, (result: Result) => void>();
  ws.addEventListener("message", (e) => {
    const msg = JSON.parse(String(e.data)) as { id?: number; result?: { usedSize?: number } };
    if (msg.id === undefined) return;
    pending.get(msg.id)?.(msg.result);
    pending.delete(msg.id);
  });
  const call = (method: string): Promise<Result | null> => {
    if (ws.readyState !== WebSocket.OPEN) return Promise.resolve(null);
    const id = ++nextId;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        resolve(null);
      }, 5_000);
      pending.set(id, (result) => {
        clearTimeout(timer);
        resolve(result ?? null);
      });
      ws.send(JSON.stringify({ id, method }));
    });
  };
  return {
    async usedAfterGcMiB() {
      if ((await call("HeapProfiler.collectGarbage")) === null) return null;
      const used = (await call("Runtime.getHeapUsage"))?.usedSize;
      return used === undefined ? null : used / 2 ** 20;
    },
    close() {
      ws.close();
    },
  };
}
