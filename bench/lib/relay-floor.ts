import type { Cleanup } from "./cleanup.js";
import { putOne } from "./etcd-load.js";
import { startRelayProcess } from "./relay-process.js";
import type { Stack } from "./stack.js";

/** The propagation floor: changes relayed by `bench/lib/relay-child.ts`, timed like the pusher. */
export interface RelayFloor {
  /** One change: the etcd put of `tag` until `get` returns the relay's value for it, ms. */
  sample(tag: string): Promise<number>;
  /** The relay's own times over every sample: put → its watch event, and its KV put, ms. */
  breakdown(): Promise<{ readonly watch: number[]; readonly put: number[] }>;
}

const epoch = () => performance.timeOrigin + performance.now();

/** Which relay: its name (etcd prefix `<root><name>/v1/`, KV key `<name>-probe`), and what it reads. */
export interface StackRelayOptions {
  /** Default `relay`. */
  readonly name?: string;
  /** Reads the stack's routing prefix before each put, as the pusher does. */
  readonly readRouting?: boolean;
}

/**
 * Starts the relay on `<root>relay/v1/`, a sibling of the stack's routing prefix (the pusher
 * neither watches nor reads it), writing `relay-probe` into the stack's namespace, padded to
 * `pad`'s size. `probeKey` is the etcd key whose puts it relays.
 */
async function startStackRelay(
  stack: Stack,
  pad: string,
  cleanup: Cleanup,
  o: StackRelayOptions = {},
) {
  const root = stack.prefix.replace(/routing\/v1\/$/, "");
  const name = o.name ?? "relay";
  const relay = await startRelayProcess({
    etcdEndpoint: stack.etcd.endpoint,
    prefix: `${root}${name}/v1/`,
    persistDir: stack.persistDir,
    namespaceId: stack.namespaceId,
    key: `${name}-probe`,
    pad,
    workDir: stack.persistDir,
    ...(o.readRouting ? { readPrefix: stack.prefix } : {}),
    cleanup,
  });
  return { relay, probeKey: `${root}${name}/v1/probe` };
}

/**
 * The floor of the propagation figure: {@link startStackRelay} with values the size of `routes`
 * now. `get` and `poll` are the figure's own reader and polling.
 */
export async function openRelayFloor(o: {
  readonly stack: Stack;
  readonly get: (key: string) => Promise<string | null>;
  readonly poll: (fn: () => Promise<number | null>) => Promise<number | null>;
  readonly cleanup: Cleanup;
  readonly relay?: StackRelayOptions;
}): Promise<RelayFloor> {
  const { stack } = o;
  const { relay, probeKey } = await startStackRelay(
    stack,
    (await o.get("routes")) ?? "",
    o.cleanup,
    o.relay,
  );
  const starts = new Map<string, number>();
  return {
    async sample(tag) {
      starts.set(tag, epoch());
      const t0 = performance.now();
      const put = putOne(stack.client, probeKey, tag);
      const seenAt = await o.poll(async () =>
        (await o.get(relay.key))?.startsWith(`${tag}:`) ? performance.now() : null,
      );
      await put;
      if (seenAt === null) throw new Error(`the relay never delivered ${tag}`);
      return seenAt - t0;
    },
    async breakdown() {
      const watch: number[] = [];
      const put: number[] = [];
      for (const s of await relay.report()) {
        const start = starts.get(s.tag);
        if (start === undefined) continue;
        watch.push(s.event - start);
        put.push(s.put - s.event);
      }
      return { watch, put };
    },
  };
}
