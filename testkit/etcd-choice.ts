import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** One etcd installation of the matrix: `.tools/etcd-v<version>/` with etcd, etcdctl (and etcdutl from 3.5). */
export interface EtcdInstall {
  readonly version: string;
  readonly dir: string;
  /** The etcd binary. */
  readonly bin: string;
}

/** The etcd a test run uses, and why. */
export interface EtcdChoice {
  readonly bin: string;
  /** `ETCD_BIN` as given, the newest version of the matrix, or whatever `etcd` is on PATH. */
  readonly source: "ETCD_BIN" | "matrix" | "PATH";
}

/** The project's root (the folder that holds `.tools/`). */
export const projectRoot = fileURLToPath(new URL("..", import.meta.url));

/** Compares dotted versions numerically ("3.10.0" > "3.9.1"). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** The prepared versions under `<root>/.tools/` (scripts/etcd-matrix.sh), newest first. */
export function matrixInstalls(root: string = projectRoot): EtcdInstall[] {
  const tools = join(root, ".tools");
  if (!existsSync(tools)) return [];
  const found: EtcdInstall[] = [];
  for (const name of readdirSync(tools)) {
    const m = /^etcd-v(\d+\.\d+\.\d+)$/.exec(name);
    const dir = join(tools, name);
    if (m?.[1] && existsSync(join(dir, "etcd"))) {
      found.push({ version: m[1], dir, bin: join(dir, "etcd") });
    }
  }
  return found.sort((a, b) => compareVersions(b.version, a.version));
}

/**
 * Chooses the etcd for a test run: `ETCD_BIN` when set, else the newest version of the matrix
 * (`.tools/`), else `etcd` on PATH (a machine with only a distribution's etcd).
 */
export function chooseEtcd(etcdBin: string | undefined, root: string = projectRoot): EtcdChoice {
  if (etcdBin) return { bin: resolve(etcdBin), source: "ETCD_BIN" };
  const newest = matrixInstalls(root)[0];
  if (newest) return { bin: newest.bin, source: "matrix" };
  return { bin: "etcd", source: "PATH" };
}

/**
 * Makes `choice` the etcd of this process and its children: sets `ETCD_BIN`, and puts the
 * binary's folder first on PATH so that `etcdctl` and `etcdutl` (called by tests, fault scenarios
 * and deploy scripts by name) are the same version's. A folder already on PATH is not moved.
 */
export function applyEtcdChoice(env: NodeJS.ProcessEnv, choice: EtcdChoice): void {
  if (choice.source === "PATH") return;
  env.ETCD_BIN = choice.bin;
  const dir = dirname(choice.bin);
  const path = (env.PATH ?? "").split(delimiter);
  if (!path.includes(dir)) env.PATH = [dir, ...path].join(delimiter);
}

/** `etcd --version`'s version ("3.6.16"), or undefined when the binary does not run. */
export function etcdVersionOf(bin: string): string | undefined {
  try {
    const out = execFileSync(bin, ["--version"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return /etcd Version: (\S+)/.exec(out)?.[1];
  } catch {
    return undefined;
  }
}
