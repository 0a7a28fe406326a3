import { setTimeout as sleep } from "node:timers/promises";
import { Response, type V4WorkerOptions } from "miniflare";

/** Name of the Miniflare worker that holds the real KV namespace and wraps it. */
export const KV_WRAPPER_WORKER = "routing-kv";
/** The real (Miniflare) KV namespace inside the wrapper, for writes from Node. */
export const KV_INNER_BINDING = "ROUTING_INNER";

/**
 * The `ROUTING` binding the Worker sees: a service binding to an RPC entrypoint with KV's read
 * and write methods, whose reads first ask Node how to behave, then read Miniflare's real KV
 * namespace with the Worker's own key and options. The Worker's code path is unchanged: it calls
 * `env.ROUTING.get("routes", { type: "text", cacheTtl })` as in production; only the time KV
 * takes to answer is under the test's control, as a slow or stuck KV location would be.
 * (Miniflare 5 has no wrapped bindings; an RPC entrypoint is how a binding gets a stand-in body.)
 */
const WRAPPER_MODULE = `
import { WorkerEntrypoint } from "cloudflare:workers";
export class RoutingKv extends WorkerEntrypoint {
  async gate(op, key) {
    const res = await this.env.KV_CONTROL.fetch("http://kv-control/" + op + "?key=" + encodeURIComponent(key));
    await res.arrayBuffer();
  }
  async get(key, options) {
    await this.gate("get", key);
    return this.env.${KV_INNER_BINDING}.get(key, options);
  }
  async getWithMetadata(key, options) {
    await this.gate("get", key);
    return this.env.${KV_INNER_BINDING}.getWithMetadata(key, options);
  }
  put(key, value, options) { return this.env.${KV_INNER_BINDING}.put(key, value, options); }
  delete(key) { return this.env.${KV_INNER_BINDING}.delete(key); }
  list(options) { return this.env.${KV_INNER_BINDING}.list(options); }
}
export default { fetch() { return new Response("routing-kv", { status: 404 }); } };
`;

/** The entrypoint of the wrapper worker that `ROUTING` binds to. */
export const KV_WRAPPER_ENTRYPOINT = "RoutingKv";

/** How the wrapped `ROUTING` answers reads, set from the test. */
export interface KvReadControl {
  /** Every read from now on waits `ms` before reading KV (0: at once). Releases hung reads. */
  delay(ms: number): void;
  /** Every read from now on (and every one waiting) hangs until `delay()` or `release()`. */
  hang(): void;
  /** Lets hung reads through and returns to answering at once. */
  release(): void;
  /** Reads of `routes` (any key) started so far. */
  readonly started: number;
  /** Reads currently held back by a delay or a hang. */
  readonly waiting: number;
  /** Resolves once `n` reads have started in total (bounded). */
  untilStarted(n: number, timeoutMs?: number): Promise<void>;
}

/** A controllable gate for KV reads, plus the Miniflare worker that applies it. */
export interface KvWrapper {
  readonly control: KvReadControl;
  /**
   * Add to Miniflare's `workers`; bind with
   * `serviceBindings: { ROUTING: { name: KV_WRAPPER_WORKER, entrypoint: KV_WRAPPER_ENTRYPOINT } }`.
   */
  readonly worker: V4WorkerOptions;
}

/** Creates the KV gate; `namespaceId` names the inner namespace (to share a persisted one). */
export function createKvWrapper(namespaceId?: string): KvWrapper {
  let delayMs = 0;
  let hanging = false;
  let started = 0;
  let waiting = 0;
  let releaseAll: () => void = () => undefined;
  let released = new Promise<void>((resolve) => {
    releaseAll = resolve;
  });
  const freeHung = () => {
    releaseAll();
    released = new Promise<void>((resolve) => {
      releaseAll = resolve;
    });
  };

  const gate = async (): Promise<Response> => {
    started += 1;
    waiting += 1;
    try {
      if (hanging) await released;
      else if (delayMs > 0) await sleep(delayMs);
    } finally {
      waiting -= 1;
    }
    return new Response("ok");
  };

  const control: KvReadControl = {
    delay(ms) {
      delayMs = ms;
      hanging = false;
      freeHung();
    },
    hang() {
      hanging = true;
    },
    release() {
      control.delay(0);
    },
    get started() {
      return started;
    },
    get waiting() {
      return waiting;
    },
    async untilStarted(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (started < n) {
        if (Date.now() > deadline) throw new Error(`only ${started} of ${n} KV reads started`);
        await sleep(2);
      }
    },
  };

  const worker: V4WorkerOptions = {
    name: KV_WRAPPER_WORKER,
    modules: [{ type: "ESModule", path: "routing-kv.mjs", contents: WRAPPER_MODULE }],
    kvNamespaces: { [KV_INNER_BINDING]: namespaceId ?? KV_INNER_BINDING },
    serviceBindings: { KV_CONTROL: gate },
  };
  return { control, worker };
}
