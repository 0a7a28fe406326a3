import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { spawnOwned } from "../../testkit/owned-process.js";
import type { Cleanup } from "./cleanup.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CHILD = fileURLToPath(new URL("./relay-child.ts", import.meta.url));

/** What the relay saw for one tag: epoch ms of its watch event and of its KV put's end. */
export interface RelaySample {
  readonly tag: string;
  readonly event: number;
  readonly put: number;
}

/** A running floor relay (`bench/lib/relay-child.ts`). */
export interface RelayProcess {
  readonly pid: number;
  /** The KV key it writes. */
  readonly key: string;
  /** Every event and put the relay has recorded so far (asked of the child). */
  report(): Promise<readonly RelaySample[]>;
  stop(): Promise<void>;
}

/** Where the relay watches and writes. */
export interface RelayOptions {
  readonly etcdEndpoint: string;
  /** The etcd prefix it watches. */
  readonly prefix: string;
  readonly persistDir: string;
  readonly namespaceId: string;
  /** The KV key it writes `<etcd value>:<pad>` to. */
  readonly key: string;
  /** The body of every value it writes (its size is what matters). */
  readonly pad: string;
  /** Read this prefix before each put, as the pusher does (`readPrefixDelta`). */
  readonly readPrefix?: string;
  /** Directory for the pad file. */
  readonly workDir: string;
  readonly cleanup: Cleanup;
}

/**
 * Starts the relay as its own Node process, as the pusher runs (its own Miniflare and workerd),
 * and waits until it watches. Stopped by its PID through `cleanup`.
 */
export async function startRelayProcess(o: RelayOptions): Promise<RelayProcess> {
  const padFile = join(o.workDir, `${o.key}-pad.txt`);
  writeFileSync(padFile, o.pad);
  const proc = spawnOwned("floor relay", process.execPath, ["--import", "tsx", CHILD], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      RELAY_ETCD: o.etcdEndpoint,
      RELAY_PREFIX: o.prefix,
      RELAY_PERSIST: o.persistDir,
      RELAY_NAMESPACE: o.namespaceId,
      RELAY_KEY: o.key,
      RELAY_PAD_FILE: padFile,
      ...(o.readPrefix ? { RELAY_READ_PREFIX: o.readPrefix } : {}),
    },
    stdin: "pipe",
    outputLimit: 64 * 1024,
  });
  const { pid, child, exited } = proc;
  if (pid <= 0) throw new Error(`could not start the floor relay: ${proc.output()}`);
  const stop = () => proc.stop(10_000);
  o.cleanup.add(`floor relay ${pid}`, stop);

  const lines = createInterface({ input: child.stdout! });
  const waiting: Array<(line: string) => void> = [];
  lines.on("line", (line) => waiting.shift()?.(line));
  const nextLine = (timeoutMs: number) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`floor relay silent: ${proc.output().slice(-1500)}`));
      }, timeoutMs);
      waiting.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`floor relay exited: ${proc.output().slice(-1500)}`));
      });
    });
  if ((await nextLine(60_000)) !== "ready") throw new Error("floor relay did not start");
  return {
    pid,
    key: o.key,
    async report() {
      const answer = nextLine(10_000);
      child.stdin?.write("report\n");
      return JSON.parse(await answer) as RelaySample[];
    },
    stop,
  };
}
