/**
 * `npm run test:faults [-- --quick] [-- --only 1,7]`: attacks the running system (real etcd, the
 * real pusher and edgectl binaries, the Worker in workerd) and prints what it survived.
 * FAULTS_QUICK=1 equals --quick; FAULTS_SEED=N replays a run's random choices.
 */

import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { ownSignals } from "../../adapters/own-signals.js";
import { applyEtcdChoice, chooseEtcd, etcdVersionOf } from "../../testkit/etcd-choice.js";
import type { FaultContext, Scenario, ScenarioResult } from "./scenario.js";
import { scenarios } from "./scenarios/index.js";
import { Transcript } from "./support/transcript.js";

// etcd data dirs on tmpfs: fsync is free, and kill -9 loses nothing the kernel already holds.
if (!process.env.TMPDIR && existsSync("/dev/shm")) process.env.TMPDIR = "/dev/shm";

// ETCD_BIN, else the newest version of the matrix (.tools/), else PATH's etcd; etcdctl and etcdutl follow it.
const etcd = chooseEtcd(process.env.ETCD_BIN);
applyEtcdChoice(process.env, etcd);
process.stderr.write(
  `faults: etcd ${etcdVersionOf(etcd.bin) ?? "(not found)"}: ${etcd.bin} (${etcd.source})\n`,
);

interface Row {
  readonly scenario: Scenario;
  readonly result: ScenarioResult;
  readonly ms: number;
}

function parseArgs(argv: readonly string[]): { quick: boolean; only: Set<number> | null } {
  let quick = process.env.FAULTS_QUICK === "1" || process.env.FAULTS_QUICK === "true";
  let only: Set<number> | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? "";
    if (a === "--quick") quick = true;
    else if (a === "--only" || a.startsWith("--only=")) {
      const list = a.includes("=") ? a.slice(7) : (argv[++i] ?? "");
      only = new Set(list.split(",").map(Number));
    } else {
      process.stderr.write(`unknown argument ${a}\nusage: test:faults [--quick] [--only 1,2]\n`);
      process.exit(2);
    }
  }
  return { quick, only };
}

const active: (() => Promise<void> | void)[] = [];

async function runCleanups(list: (() => Promise<void> | void)[]): Promise<void> {
  for (const fn of list.splice(0).reverse()) {
    try {
      await Promise.race([fn(), sleep(15_000)]);
    } catch {
      // teardown is best effort; the next one must still run
    }
  }
}

let stopping = false;
// Miniflare's own listener (the scenarios' workerd) would exit before the cleanups are done.
ownSignals(["SIGINT", "SIGTERM", "SIGHUP"], (sig) => {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`\n${sig}: stopping everything the suite started\n`);
  void runCleanups(active).finally(() => process.exit(130));
});

async function runOne(s: Scenario, base: Omit<FaultContext, "defer" | "progress">): Promise<Row> {
  const started = Date.now();
  const ctx: FaultContext = {
    ...base,
    defer: (fn) => {
      active.push(fn);
    },
    progress: (m) => process.stderr.write(`  [${s.id}] ${m}\n`),
  };
  process.stderr.write(`\n== ${s.id}. ${s.title}\n   invariant: ${s.invariant}\n`);
  const budget = s.budgetMs(base.quick);
  let timer: NodeJS.Timeout | undefined;
  let result: ScenarioResult;
  try {
    result = await Promise.race([
      s.run(ctx),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`exceeded its time budget of ${Math.round(budget / 1000)} s`)),
          budget,
        );
      }),
    ]);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    result = {
      runs: 0,
      figure: "aborted",
      failures: [`scenario error: ${msg.split("\n").slice(0, 6).join(" | ")}`],
    };
  } finally {
    clearTimeout(timer);
    await runCleanups(active);
  }
  const ms = Date.now() - started;
  const verdict = result.failures.length === 0 ? "pass" : "FAIL";
  process.stderr.write(`   ${verdict} in ${(ms / 1000).toFixed(1)} s: ${result.figure}\n`);
  for (const f of result.failures) process.stderr.write(`   ✗ ${f}\n`);
  return { scenario: s, result, ms };
}

function table(rows: readonly Row[]): string {
  const head = ["#", "scenario", "runs", "time", "figure", "result"];
  const body = rows.map((r) => [
    String(r.scenario.id),
    r.scenario.title,
    String(r.result.runs),
    `${(r.ms / 1000).toFixed(0)}s`,
    r.result.figure,
    r.result.failures.length === 0 ? "pass" : "FAIL",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === 2 || i === 3 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
}

async function main(): Promise<void> {
  const { quick, only } = parseArgs(process.argv.slice(2));
  const seed = Number(process.env.FAULTS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const transcript = new Transcript();
  const started = Date.now();
  process.stderr.write(
    `fault suite: ${quick ? "quick" : "full"} run, seed ${seed} (FAULTS_SEED=${seed} replays it)\n`,
  );
  const rows: Row[] = [];
  for (const s of scenarios) {
    if (only && !only.has(s.id)) continue;
    rows.push(await runOne(s, { quick, seed: seed + s.id, transcript }));
  }
  const passed = rows.filter((r) => r.result.failures.length === 0).length;
  const failed = rows.length - passed;
  const out = [
    "",
    table(rows),
    "",
    ...rows.flatMap((r) =>
      [...(r.result.notes ?? []), ...r.result.failures.map((f) => `FAIL: ${f}`)].map(
        (n) => `${r.scenario.id}. ${n}`,
      ),
    ),
    `total ${((Date.now() - started) / 1000).toFixed(0)} s (${quick ? "quick" : "full"}, seed ${seed})`,
    `faults: ${rows.length} scenarios, ${passed} passed, ${failed} failed`,
  ];
  process.stdout.write(`${out.join("\n")}\n`);
  process.exit(failed === 0 && rows.length > 0 ? 0 : 1);
}

await main();
