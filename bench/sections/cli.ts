import { execFile, execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { startEtcd } from "../../testkit/etcd.js";
import { installPackage } from "../../testkit/installed-package.js";
import { startKvStandin } from "../../testkit/kv-standin.js";
import { spawnOwned } from "../../testkit/owned-process.js";
import { freePort } from "../../testkit/ports.js";
import type { Cleanup } from "../lib/cleanup.js";
import { floorBundle } from "../lib/floor-bundle.js";
import { pollUntil } from "../lib/poll-until.js";
import { round, summarize } from "../lib/stats.js";

/** `cli` in results.json: the installed package's start-up cost and size. */
export interface CliResult {
  /** Median wall time of `edgectl --help`, run from the installed package. */
  readonly help_ms: number;
  readonly help_ms_max: number;
  /** Floor, same run: `node -e 0` (the runtime's own start). */
  readonly node_start_ms: number;
  /** Median of `edgectl status` against a local stack (etcd, the installed pusher, KV stand-in). */
  readonly status_ms: number;
  readonly status_ms_max: number;
  /**
   * Floor of `status`, same run: Node loading etcd3 and making one range read, then reading KV
   * and the pusher's `/status` with Node's `fetch` (`STATUS_FLOOR`), and nothing of edgectl.
   */
  readonly status_floor_ms: number;
  readonly runs: number;
  /** `du` of the production install's node_modules, in MiB. */
  readonly install_mb: number;
  /** Packages in that install. */
  readonly install_packages: number;
}

/** Options of the section. */
export interface CliOptions {
  readonly runs: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * What `edgectl status` cannot do without: its three reads, with the libraries they need; run
 * bundled as dist/ is (bench/lib/floor-bundle.ts).
 */
const STATUS_FLOOR = `
const { Etcd3 } = await import("etcd3");
const client = new Etcd3({ hosts: process.env.ETCD_ENDPOINTS });
await client.get("/edge/routing/v1/epoch").string();
client.close();
const kv = await fetch(process.env.FLOOR_KV_URL, {
  headers: { authorization: "Bearer " + process.env.CF_API_TOKEN },
});
await kv.text();
await (await fetch(process.env.FLOOR_STATUS_URL)).text();
`;

/**
 * Wall time of one run of `node ARGS`, in ms; throws when it exits non-zero. Asynchronous: the KV
 * stand-in answers from this process, so blocking on the child would starve it.
 */
function timed(args: readonly string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { env, cwd, timeout: 30_000 }, (err, stdout, stderr) => {
      const ms = performance.now() - t0;
      if (err) {
        const out = `${stdout}${stderr}`.slice(-800);
        reject(new Error(`node ${args.join(" ")} failed (${err.code ?? err.signal}): ${out}`));
      } else resolve(ms);
    });
  });
}

/** Median (and max) of `runs` timed runs, after one warm-up run (V8's code cache, page cache). */
async function medianOf(
  runs: number,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
) {
  await timed(args, env, cwd);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await timed(args, env, cwd));
  const s = summarize(times);
  return { p50: s.p50, max: s.max };
}

/** Packs and installs the package, then times `edgectl --help` and `edgectl status` from it. */
export async function cli(o: CliOptions): Promise<CliResult> {
  const pkg = await installPackage();
  o.cleanup.add("installed package", () => pkg.remove());
  const modules = join(pkg.prefix, "node_modules");
  const installKb = Number(execFileSync("du", ["-sk", modules]).toString().split("\t")[0]);
  const packages = Number(
    execFileSync("sh", ["-c", `find "${modules}" -name package.json -not -path "*/test/*" | wc -l`])
      .toString()
      .trim(),
  );
  const edgectl = pkg.bin("edgectl");
  const baseEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: pkg.dir };

  const floor = await medianOf(o.runs, ["-e", "0"], baseEnv);
  const help = await medianOf(o.runs, [edgectl, "--help"], baseEnv);
  o.log(
    `  edgectl --help p50 ${help.p50.toFixed(0)} ms (node -e 0: ${floor.p50.toFixed(0)} ms), install ${(installKb / 1024).toFixed(1)} MiB`,
  );

  // The local stack: etcd, the KV stand-in and the installed pusher on the Cloudflare sink.
  const etcd = await startEtcd();
  o.cleanup.add("cli etcd", () => etcd.stop());
  const kv = await startKvStandin();
  o.cleanup.add("cli kv stand-in", () => kv.close());
  const port = await freePort();
  const env = {
    ...baseEnv,
    ETCD_ENDPOINTS: etcd.endpoint,
    KV_SINK: "cloudflare",
    CF_API_BASE_URL: kv.url,
    CF_ACCOUNT_ID: kv.accountId,
    CF_API_TOKEN: kv.token,
    KV_NAMESPACE_ID: kv.namespaceId,
    PUSHER_LISTEN: `127.0.0.1:${port}`,
  };
  await timed([edgectl, "apply", join(ROOT, "examples/routing.yaml"), "--yes"], env);
  const pusher = spawnOwned("cli pusher", process.execPath, [pkg.bin("edge-pusher")], {
    cwd: pkg.dir,
    env,
    outputLimit: 16 * 1024,
  });
  o.cleanup.add("cli pusher", () => pusher.stop(15_000));
  const statusArgs = [edgectl, "status", "--pusher", `http://127.0.0.1:${port}`];
  // Timed only once the edge is in sync (exit 0): the pusher has pushed and reports it.
  let lastError: unknown = null;
  const synced = await pollUntil(
    async () => {
      try {
        return await timed(statusArgs, env);
      } catch (e) {
        lastError = e;
        return null;
      }
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  if (synced === null) throw lastError ?? new Error("edgectl status never reported in sync");
  const status = await medianOf(o.runs, statusArgs, env);
  const statusFloor = await medianOf(
    o.runs,
    [await floorBundle("status", { source: STATUS_FLOOR })],
    {
      ...env,
      FLOOR_KV_URL: `${kv.url}/accounts/${kv.accountId}/storage/kv/namespaces/${kv.namespaceId}/values/routes`,
      FLOOR_STATUS_URL: `http://127.0.0.1:${port}/status`,
    },
    pkg.prefix,
  );
  o.log(
    `  edgectl status p50 ${status.p50.toFixed(0)} ms (in sync, exit 0); its floor ${statusFloor.p50.toFixed(0)} ms`,
  );

  return {
    help_ms: round(help.p50),
    help_ms_max: round(help.max),
    node_start_ms: round(floor.p50),
    status_ms: round(status.p50),
    status_ms_max: round(status.max),
    status_floor_ms: round(statusFloor.p50),
    runs: o.runs,
    install_mb: round(installKb / 1024),
    install_packages: packages,
  };
}
