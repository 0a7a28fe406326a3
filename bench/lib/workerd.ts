import { fileURLToPath } from "node:url";
import type { Miniflare, RequestInitCfType, V4WorkerOptions } from "miniflare";
import { localPersistRoot } from "../../adapters/kv/kv-settings.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { bundleForWorkerd, bundleWorker, compatibilityDate } from "../../testkit/worker.js";
import type { Cleanup } from "./cleanup.js";
import { childPids, commName, rssMb } from "./proc.js";
import { processRunSeconds } from "./thread-cpu.js";

const PASS_ENTRY = fileURLToPath(new URL("../workers/passthrough.ts", import.meta.url));
const FLOOR_ENTRY = fileURLToPath(new URL("../workers/contract-floor.ts", import.meta.url));

/** Host names that select a Worker on the shared workerd socket. */
export const EDGE_HOST = "edge.bench";
export const PASS_HOST = "pass.bench";
/** The contract-floor Worker (`bench/workers/contract-floor.ts`). */
export const FLOOR_HOST = "floor.bench";
/** The routing Worker again, signing every origin request (docs/reference.md §11). */
export const SIGNED_HOST = "signed.bench";
/** The routing Worker again, recording every request into its aggregator (docs/reference.md §12). */
export const OBSERVED_HOST = "observed.bench";

/** The routing Worker and the pass-through Worker (and maybe the contract floor) in one workerd. */
export interface BenchWorkerd {
  readonly mf: Miniflare;
  /** `http://127.0.0.1:PORT`; pick the Worker with the Host header. */
  readonly url: string;
  /** Requests the routing Worker in-process (Miniflare dispatch), as country `cc`. */
  edgeFetch(path: string, cc: string): Promise<Response>;
  /** RSS of workerd processes started by this Miniflare, MiB. */
  rssMb(): number;
  /** CPU seconds the workerd processes started by this Miniflare have used so far. */
  cpuSeconds(): number;
}

/** The pass-through Worker (`bench/workers/passthrough.ts`) bundled for workerd. */
export function bundlePassthrough(): Promise<string> {
  return bundleForWorkerd(PASS_ENTRY);
}

/** The contract-floor Worker (`bench/workers/contract-floor.ts`) bundled for workerd. */
export function bundleContractFloor(): Promise<string> {
  return bundleForWorkerd(FLOOR_ENTRY);
}

/** The routing Worker on `host`; the caller adds its `ROUTING` binding and vars. */
export function edgeWorker(script: string, date: string, host: string): V4WorkerOptions {
  return { name: "edge", modules: true, script, compatibilityDate: date, routes: [`${host}/*`] };
}

/**
 * The pass-through Worker on `host`, forwarding to `origin`; or, with another `name` and script,
 * the contract floor (`vars` may carry its `PARTS`).
 */
export function passWorker(
  script: string,
  date: string,
  host: string,
  origin: string,
  name = "pass",
  vars: Readonly<Record<string, string>> = {},
): V4WorkerOptions {
  return {
    name,
    modules: true,
    script,
    compatibilityDate: date,
    routes: [`${host}/*`],
    bindings: { ...vars, ORIGIN: origin },
  };
}

/** Options: where the routing Worker's `ROUTING` namespace lives and its vars. */
export interface BenchWorkerdOptions {
  readonly persistDir: string;
  readonly namespaceId: string;
  /** Origin of the pass-through Worker. */
  readonly passOrigin: string;
  readonly vars: Readonly<Record<string, string>>;
  /** Also start the contract floor on {@link FLOOR_HOST} (the Worker-overhead section). */
  readonly floor?: boolean;
  /** Also start the routing Worker on {@link SIGNED_HOST} with these vars added (its secrets). */
  readonly signedVars?: Readonly<Record<string, string>>;
  /**
   * Whether the routing Worker on {@link EDGE_HOST} (and {@link SIGNED_HOST}) has the
   * `OBSERVATIONS` aggregator bound and so records every request, as wrangler.toml deploys it:
   * default `true`, so every Worker goal is measured with recording on.
   */
  readonly recording?: boolean;
  /**
   * Also start the routing Worker on {@link OBSERVED_HOST} with these vars added and the
   * `OBSERVATIONS` aggregator bound (with `recording: false`, the one that records).
   */
  readonly observedVars?: Readonly<Record<string, string>>;
  readonly cleanup: Cleanup;
}

/**
 * Starts the routing and pass-through Workers (and, when asked, the contract floor), bundled like
 * `wrangler dev`, in one workerd on a loopback port.
 */
export async function startBenchWorkerd(o: BenchWorkerdOptions): Promise<BenchWorkerd> {
  const [edgeScript, passScript, floorScript, date] = await Promise.all([
    bundleWorker(),
    bundlePassthrough(),
    o.floor ? bundleContractFloor() : null,
    compatibilityDate(),
  ]);
  const before = new Set(childPids(process.pid));
  const aggregator = {
    durableObjects: { OBSERVATIONS: { className: "ObservationAggregator", useSQLite: true } },
  };
  const recording = o.recording === false ? {} : aggregator;
  const mf = newMiniflare({
    host: "127.0.0.1",
    port: 0,
    resourcePersistencePath: localPersistRoot(o.persistDir),
    cf: false,
    workers: [
      {
        ...edgeWorker(edgeScript, date, EDGE_HOST),
        kvNamespaces: { ROUTING: o.namespaceId },
        bindings: { ...o.vars },
        ...recording,
      },
      passWorker(passScript, date, PASS_HOST, o.passOrigin),
      ...(floorScript ? [passWorker(floorScript, date, FLOOR_HOST, o.passOrigin, "floor")] : []),
      ...(o.signedVars
        ? [
            {
              ...edgeWorker(edgeScript, date, SIGNED_HOST),
              name: "edge-signed",
              kvNamespaces: { ROUTING: o.namespaceId },
              bindings: { ...o.vars, ...o.signedVars },
              ...recording,
            },
          ]
        : []),
      ...(o.observedVars
        ? [
            {
              ...edgeWorker(edgeScript, date, OBSERVED_HOST),
              name: "edge-observed",
              kvNamespaces: { ROUTING: o.namespaceId },
              bindings: { ...o.vars, ...o.observedVars },
              ...aggregator,
            },
          ]
        : []),
    ],
  });
  o.cleanup.add("workerd", () => mf.dispose());
  const url = (await mf.ready).origin;
  const mine = childPids(process.pid).filter(
    (p) => !before.has(p) && commName(p).startsWith("workerd"),
  );
  return {
    mf,
    url,
    edgeFetch: (path, cc) =>
      mf.dispatchFetch(`http://${EDGE_HOST}${path}`, {
        cf: { country: cc } as RequestInitCfType,
        redirect: "manual",
      }) as unknown as Promise<Response>,
    rssMb: () => mine.reduce((s, p) => s + (rssMb(p) || 0), 0),
    cpuSeconds: () => mine.reduce((s, p) => s + processRunSeconds(p), 0),
  };
}
