/**
 * The V8 heap of one Worker isolate in workerd, read over its inspector (the Chrome DevTools
 * Protocol's `Runtime.getHeapUsage`): the Worker's own memory, apart from workerd's and the
 * local runtime's.
 */
export interface IsolateHeap {
  /** Heap used, MiB; null when the inspector does not answer within 2 s. */
  usedMiB(): Promise<number | null>;
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
  const pending = new Map<number, (used: number | null) => void>();
  ws.addEventListener("message", (e) => {
    const msg = JSON.parse(String(e.data)) as { id?: number; result?: { usedSize?: number } };
    if (msg.id === undefined) return;
    pending.get(msg.id)?.(msg.result?.usedSize ?? null);
    pending.delete(msg.id);
  });
  return {
    usedMiB() {
      if (ws.readyState !== WebSocket.OPEN) return Promise.resolve(null);
      const id = ++nextId;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          resolve(null);
        }, 2_000);
        pending.set(id, (used) => {
          clearTimeout(timer);
          resolve(used === null ? null : used / 2 ** 20);
        });
        ws.send(JSON.stringify({ id, method: "Runtime.getHeapUsage" }));
      });
    },
    close() {
      ws.close();
    },
  };
}
