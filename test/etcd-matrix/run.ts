/**
 * `npm run test:etcd-matrix [-- --versions 3.6.16,3.7.3] [-- --suites vitest,faults] [-- --ci]`:
 * runs the etcd-facing suites against every etcd of the matrix (`.tools/etcd-v<version>/`,
 * prepared by scripts/etcd-matrix.sh) in turn, and prints a table of version × suite ×
 * passed/failed. `--ci` runs the subset that .ci/run gives the versions besides the newest
 * (which runs the whole of `npm test` and the quick fault suite there).
 * Each run's output is kept in .tmp/etcd-matrix/ (.tmp/etcd-matrix-ci/ with `--ci`) as
 * `<version>-<suite>.log`; the table also goes to results.json there. Exits 1 when any suite failed or a requested version is missing.
 */
import { spawn } from "node:child_process";
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import {
  compareVersions,
  etcdVersionOf,
  matrixInstalls,
  projectRoot,
} from "../../testkit/etcd-choice.js";

/** The vitest files that talk to etcd: the pusher, edgectl, the end-to-end stacks, the cluster helper. */
export const ETCD_VITEST_PATHS = [
  "test/pusher",
  "test/edgectl",
  "test/observer/observer-loop.test.ts",
  "test/e2e",
  "test/helpers",
  "test/adapters/paged-range.test.ts",
  "test/etcd-matrix",
] as const;

/**
 * The `--ci` subset: the tests of each server behaviour the code depends on that has changed, or
 * could change, between etcd lines (docs/reliability.md "etcd versions"): ranges with filters,
 * counts and pages; watches and compaction; leases, elections and leader changes; transactions
 * and RBAC; a cluster's kills, partitions, quorum loss and restore.
 */
export const CI_VITEST_PATHS = [
  "test/etcd-matrix",
  "test/testkit/etcd-cluster.test.ts",
  "test/adapters/paged-range.test.ts",
  "test/pusher/prefix-mirror.test.ts",
  "test/pusher/delta-reads.test.ts",
  "test/pusher/watch-guard.test.ts",
  "test/pusher/leadership.test.ts",
  "test/pusher/history-tracker.test.ts",
  "test/edgectl/apply.test.ts",
  "test/edgectl/rollback.test.ts",
  "test/edgectl/audit-rbac.test.ts",
  "test/e2e/etcd-auth.test.ts",
] as const;

/**
 * The `--ci` fault scenarios: compaction (3), etcd auth and its bypasses (9), a member cut off
 * from its peers (12: `hasleader`, pre-vote), restore (14). Member and leader kills (11) are in
 * the subset's cluster tests; quorum loss (13) mostly waits out a fixed 36 s. The full matrix
 * runs both.
 */
export const CI_FAULTS = [3, 9, 12, 14] as const;

type Suite = "vitest" | "faults";
const SUITES: readonly Suite[] = ["vitest", "faults"];

interface Row {
  readonly version: string;
  readonly suite: Suite;
  readonly passed: number;
  readonly failed: number;
  readonly seconds: number;
  /** Failed tests or scenarios, by name. */
  readonly failures: readonly string[];
}

function usage(message: string): never {
  process.stderr.write(
    `${message}\nusage: test:etcd-matrix [--versions 3.6.16,3.7.3] [--suites vitest,faults]\n`,
  );
  process.exit(2);
}

function parseArgs(argv: readonly string[]): {
  versions: string[] | null;
  suites: Suite[];
  ci: boolean;
} {
  let versions: string[] | null = null;
  let ci = false;
  let suites: Suite[] = [...SUITES];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? "";
    const value = () => (a.includes("=") ? a.slice(a.indexOf("=") + 1) : (argv[++i] ?? ""));
    if (a === "--versions" || a.startsWith("--versions=")) {
      versions = value().split(",").filter(Boolean);
    } else if (a === "--suites" || a.startsWith("--suites=")) {
      const list = value().split(",").filter(Boolean);
      for (const s of list) if (!SUITES.includes(s as Suite)) usage(`unknown suite ${s}`);
      suites = list as Suite[];
    } else if (a === "--ci") ci = true;
    else usage(`unknown argument ${a}`);
  }
  return { versions, suites, ci };
}

/** Runs a command with `ETCD_BIN` set, its output into `logPath`; resolves its exit code. */
function runLogged(cmd: string, args: string[], etcdBin: string, logPath: string): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const log = createWriteStream(logPath);
    const child = spawn(cmd, args, {
      cwd: projectRoot,
      env: { ...process.env, ETCD_BIN: etcdBin, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      log.end();
      resolvePromise(code ?? (signal ? 128 : 1));
    });
  });
}

const bin = (name: string) => join(projectRoot, "node_modules", ".bin", name);

async function runVitest(
  version: string,
  etcdBin: string,
  dir: string,
  paths: readonly string[],
): Promise<Row> {
  const json = join(dir, `${version}-vitest.json`);
  const started = Date.now();
  const code = await runLogged(
    bin("vitest"),
    ["run", ...paths, "--reporter=default", "--reporter=json", `--outputFile.json=${json}`],
    etcdBin,
    join(dir, `${version}-vitest.log`),
  );
  const seconds = (Date.now() - started) / 1000;
  if (!existsSync(json)) {
    return {
      version,
      suite: "vitest",
      passed: 0,
      failed: 1,
      seconds,
      failures: [`vitest exited ${code} without results`],
    };
  }
  const r = JSON.parse(readFileSync(json, "utf8")) as {
    numPassedTests: number;
    numFailedTests: number;
    testResults: {
      name: string;
      status: string;
      message?: string;
      assertionResults: { fullName: string; status: string }[];
    }[];
  };
  const failures = r.testResults.flatMap((f) => {
    const tests = f.assertionResults
      .filter((t) => t.status === "failed")
      .map((t) => `${f.name.replace(`${projectRoot}/`, "")}: ${t.fullName}`);
    // A file that fails to load has no failed test, only a message.
    return tests.length === 0 && f.status === "failed"
      ? [`${f.name.replace(`${projectRoot}/`, "")}: ${f.message ?? "failed"}`]
      : tests;
  });
  const failed = Math.max(r.numFailedTests, failures.length, code === 0 ? 0 : 1);
  return { version, suite: "vitest", passed: r.numPassedTests, failed, seconds, failures };
}

async function runFaults(
  version: string,
  etcdBin: string,
  dir: string,
  only: readonly number[] | null,
): Promise<Row> {
  const logPath = join(dir, `${version}-faults.log`);
  const started = Date.now();
  const code = await runLogged(
    process.execPath,
    [
      "--import",
      "tsx",
      "test/faults/run.ts",
      "--quick",
      ...(only ? ["--only", only.join(",")] : []),
    ],
    etcdBin,
    logPath,
  );
  const seconds = (Date.now() - started) / 1000;
  const text = readFileSync(logPath, "utf8");
  const m = /faults: (\d+) scenarios, (\d+) passed, (\d+) failed/.exec(text);
  const failures = [...text.matchAll(/^(\d+)\. FAIL: (.*)$/gm)].map(
    (f) => `scenario ${f[1]}: ${f[2]}`,
  );
  if (!m) {
    return {
      version,
      suite: "faults",
      passed: 0,
      failed: 1,
      seconds,
      failures: [`fault suite exited ${code} without a summary`],
    };
  }
  return {
    version,
    suite: "faults",
    passed: Number(m[2]),
    failed: Math.max(Number(m[3]), code === 0 ? 0 : 1),
    seconds,
    failures,
  };
}

function table(rows: readonly Row[]): string {
  const head = ["etcd", "suite", "passed", "failed", "time", "result"];
  const body = rows.map((r) => [
    r.version,
    r.suite,
    String(r.passed),
    String(r.failed),
    `${Math.round(r.seconds)} s`,
    r.failed === 0 ? "pass" : "FAIL",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i >= 2 && i <= 4 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
}

async function main(): Promise<void> {
  const { versions, suites, ci } = parseArgs(process.argv.slice(2));
  const installs = matrixInstalls();
  // --ci: the pinned releases (test/etcd-matrix/v*/) but the newest, which CI's npm test runs on.
  const pinned = readdirSync(join(projectRoot, "test", "etcd-matrix"))
    .filter((d) => /^v\d+\.\d+\.\d+$/.test(d))
    .map((d) => d.slice(1))
    .sort((a, b) => compareVersions(b, a));
  const chosen = versions ?? (ci ? pinned.slice(1) : installs.map((i) => i.version));
  const missing = chosen.filter((v) => !installs.some((i) => i.version === v));
  if (chosen.length === 0) {
    process.stderr.write("etcd-matrix: no etcd in .tools/ (run bash scripts/etcd-matrix.sh)\n");
    process.exit(1);
  }
  const dir = join(projectRoot, ".tmp", ci ? "etcd-matrix-ci" : "etcd-matrix");
  mkdirSync(dir, { recursive: true });
  const rows: Row[] = [];
  const started = Date.now();
  for (const version of chosen) {
    const install = installs.find((i) => i.version === version);
    if (!install) continue;
    const reported = etcdVersionOf(install.bin);
    if (reported !== version) {
      process.stderr.write(
        `etcd-matrix: ${install.bin} reports ${reported ?? "nothing"}, not ${version}\n`,
      );
      rows.push({
        version,
        suite: "vitest",
        passed: 0,
        failed: 1,
        seconds: 0,
        failures: [`binary reports ${reported}`],
      });
      continue;
    }
    for (const suite of suites) {
      process.stderr.write(
        `etcd-matrix: etcd ${version}, ${suite}… (log: ${join(dir, `${version}-${suite}.log`)})\n`,
      );
      const row =
        suite === "vitest"
          ? await runVitest(version, install.bin, dir, ci ? CI_VITEST_PATHS : ETCD_VITEST_PATHS)
          : await runFaults(version, install.bin, dir, ci ? CI_FAULTS : null);
      process.stderr.write(
        `etcd-matrix: etcd ${version}, ${suite}: ${row.passed} passed, ${row.failed} failed in ${Math.round(row.seconds)} s\n`,
      );
      rows.push(row);
    }
  }
  const failures = rows.flatMap((r) => r.failures.map((f) => `${r.version} ${r.suite}: ${f}`));
  const out = [
    "",
    table(rows),
    "",
    ...failures.map((f) => `FAIL ${f}`),
    ...missing.map((v) => `MISSING etcd ${v}: not in .tools/ (scripts/etcd-matrix.sh prepares it)`),
    `etcd-matrix: ${chosen.length} versions, ${rows.filter((r) => r.failed === 0).length} of ${rows.length} suite runs passed in ${Math.round((Date.now() - started) / 1000)} s`,
  ];
  writeFileSync(join(dir, "results.json"), `${JSON.stringify({ rows, missing }, null, 2)}\n`);
  process.stdout.write(`${out.join("\n")}\n`);
  process.exit(rows.every((r) => r.failed === 0) && missing.length === 0 ? 0 : 1);
}

await main();
