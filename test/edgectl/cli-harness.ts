import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import { afterAll, beforeAll } from "vitest";
import { stringify } from "yaml";
import { run } from "../../edgectl/run.js";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";

/** The result of one edgectl invocation. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A unique routing prefix per test. */
export function uniquePrefix(tag = "t"): string {
  return `/edgectl-test/${tag}-${randomUUID().slice(0, 8)}/`;
}

/** Runs edgectl in-process with a captured stdout/stderr. */
export async function runCli(
  argv: readonly string[],
  opts: {
    env: Record<string, string | undefined>;
    stdin?: string;
    isTTY?: boolean;
    signal?: AbortSignal;
  },
): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const code = await run(argv, {
    env: opts.env,
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    ...(opts.stdin !== undefined ? { stdin: Readable.from([opts.stdin]) } : {}),
    isTTY: opts.isTTY ?? false,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  return { code, stdout, stderr };
}

const BIN = resolve(import.meta.dirname, "../../bin/edgectl.js");

/** Spawns the real `bin/edgectl.js` (through tsx) as a child process. */
export function spawnBin(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): ChildProcess {
  return spawn(process.execPath, [BIN, ...argv], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Runs the real bin to completion. */
export async function runBin(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): Promise<CliResult> {
  const child = spawnBin(argv, env);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number>((r) => child.once("exit", (c) => r(c ?? -1)));
  return { code, stdout, stderr };
}

/** A temp directory for desired-state files; `cleanup()` removes it. */
export function tempFiles() {
  const dir = mkdtempSync(join(tmpdir(), "edgectl-test-"));
  let n = 0;
  return {
    dir,
    /** Writes a desired state (object → YAML, string → as is) and returns its path. */
    write(content: unknown, ext = "yaml"): string {
      const path = join(dir, `f${n++}.${ext}`);
      writeFileSync(path, typeof content === "string" ? content : stringify(content));
      return path;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The docs/reference.md §6 example desired state. */
export function exampleState() {
  return {
    pools: {
      "fra-1": { origin: "https://fra-1.origin.example.com", region: "eu-central" },
      "ams-1": { origin: "https://ams-1.origin.example.com" },
      "par-1": { origin: "https://par-1.origin.example.com" },
    },
    countries: {
      _default: { primary: "ams-1", fallbacks: ["par-1"] },
      DE: { primary: "fra-1", fallbacks: ["ams-1", "par-1"] },
    },
  };
}

/** Polls until `fn` returns true or the timeout passes; returns the last result. */
export async function waitFor(
  fn: () => Promise<boolean> | boolean,
  timeoutMs: number,
  stepMs = 100,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn()) return true;
    await sleep(stepMs);
  }
  return fn();
}

/** What `useCliSuite` provides to a test file. */
export interface CliSuite {
  readonly etcd: EtcdServer;
  readonly client: Etcd3;
  readonly files: ReturnType<typeof tempFiles>;
  /** The environment edgectl needs for one prefix. */
  envFor(prefix: string, extra?: Record<string, string>): Record<string, string>;
}

/** Registers a real etcd for the file, a client on it, and temp files removed afterwards. */
export function useCliSuite(): CliSuite {
  const suite: { etcd?: EtcdServer; client?: Etcd3 } & Omit<CliSuite, "etcd" | "client"> = {
    files: tempFiles(),
    envFor(prefix: string, extra: Record<string, string> = {}) {
      return { ETCD_ENDPOINTS: suite.etcd?.endpoint ?? "", ROUTING_PREFIX: prefix, ...extra };
    },
  };
  beforeAll(async () => {
    suite.etcd = await startEtcd();
    suite.client = new Etcd3({ hosts: suite.etcd.endpoint });
  });
  afterAll(async () => {
    suite.client?.close();
    await suite.etcd?.stop();
    suite.files.cleanup();
  });
  // etcd and client are set before any test runs (beforeAll).
  return suite as CliSuite;
}

/** Applies `state` under a fresh prefix, with every example pool healthy. */
export async function seededHealthy(
  ctx: CliSuite,
  tag: string,
  state: unknown = exampleState(),
): Promise<{ prefix: string; env: Record<string, string> }> {
  const prefix = uniquePrefix(tag);
  const env = ctx.envFor(prefix);
  const r = await runCli(["apply", ctx.files.write(state), "--yes"], { env });
  if (r.code !== 0) throw new Error(`apply exited ${r.code}: ${r.stderr}`);
  for (const p of ["fra-1", "ams-1", "par-1"])
    await ctx.client.put(`${prefix}health/${p}`).value('{"status":"healthy"}');
  return { prefix, env };
}

/** The example state plus a continent rule for Europe. */
export function withEurope() {
  const s = exampleState();
  return { ...s, countries: { ...s.countries, EU: { primary: "par-1", fallbacks: ["ams-1"] } } };
}
