import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { Cleanup } from "./cleanup.js";
import { ownChild } from "./owned-child.js";

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
  /** Directory for the pad file. */
  readonly workDir: string;
  readonly cleanup: Cleanup;
}

/**
 * Starts the relay as its own Node process, as the pusher runs (its own Miniflare and workerd),
 * and waits until it watches. Stopped by its PID through `cleanup`.
 */
export async function startRelayProcess(o: RelayOptions): Promise<RelayProcess> {
  const padFile = join(o.workDir, "relay-pad.txt");
  writeFileSync(padFile, o.pad);
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", CHILD], {
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
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("could not start the floor relay");
  const { stderr, exited, stop } = ownChild(child, `floor relay ${pid}`, o.cleanup, 10_000);

  const lines = createInterface({ input: child.stdout! });
  const waiting: Array<(line: string) => void> = [];
  lines.on("line", (line) => waiting.shift()?.(line));
  const nextLine = (timeoutMs: number) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`floor relay silent: ${stderr.join("").slice(-1500)}`));
      }, timeoutMs);
      waiting.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`floor relay exited: ${stderr.join("").slice(-1500)}`));
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
