import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import type { Etcd3 } from "etcd3";
import { stringify } from "yaml";
import type { DesiredState } from "../../../core/index.js";
import type { EtcdServer } from "../../../testkit/etcd.js";
import { seededRandom } from "../../../testkit/kv-standin.js";
import { type OwnedProcess, spawnOwned } from "../../../testkit/owned-process.js";
import { ROOT } from "../../../testkit/pusher-process.js";
import { type FaultContext, Invariants, type Scenario } from "../scenario.js";
import {
  type ApplyAttempt,
  type ApplyVerdict,
  judgeApplies,
  parseApplied,
} from "../support/apply-history.js";
import { buildCasMutant } from "../support/cas-mutant.js";
import { STACK_FRAME } from "../support/edgectl.js";
import { names, scenarioEtcd, testClient } from "../support/etcd-world.js";

const LOCK_TTL_S = 3;
const POOLS = ["fra-1", "ams-1", "par-1"] as const;

interface LoopRun {
  readonly attempts: ApplyAttempt[];
  readonly pauses: number;
  readonly verdict: ApplyVerdict;
  readonly stacks: number;
  readonly unexpected: string[];
}

/** Four apply loops against one prefix for `ms`, pausing lock holders with SIGSTOP. */
async function applyLoops(
  ctx: FaultContext,
  etcd: EtcdServer,
  client: Etcd3,
  edgectlScript: string,
  ms: number,
  maxPauses: number,
): Promise<LoopRun> {
  const { prefix } = names("ops");
  const r = seededRandom(ctx.seed);
  const dir = mkdtempSync(join(tmpdir(), "faults-ops-"));
  ctx.defer(() => rmSync(dir, { recursive: true, force: true }));
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: process.env.TMPDIR,
    ETCD_ENDPOINTS: etcd.endpoint,
    ROUTING_PREFIX: prefix,
    EDGECTL_LOCK_TTL: String(LOCK_TTL_S),
  };
  const desiredFor = (marker: string): DesiredState => ({
    pools: Object.fromEntries(
      POOLS.map((p) => [
        p,
        p === "fra-1"
          ? { origin: `https://${p}.example.net`, region: marker }
          : { origin: `https://${p}.example.net` },
      ]),
    ),
    countries: {
      _default: { primary: "ams-1", fallbacks: ["par-1"] },
      DE: { primary: POOLS[Math.floor(r() * 3)] ?? "fra-1", fallbacks: [] },
    },
  });
  const startRev = Number((await client.put(`${prefix}epoch`).value("0").exec()).header.revision);
  const running = new Map<number, { proc: OwnedProcess; attempt: { paused: boolean } }>();
  const attempts: ApplyAttempt[] = [];
  const deadline = Date.now() + ms;
  let pauses = 0;
  let stacks = 0;
  const unexpected: string[] = [];

  // The pauser: when a lock holder is one of our children, stop it past the lock TTL.
  const watcher = await client.watch().key(`${prefix}lock/apply`).create();
  ctx.defer(() => watcher.cancel());
  let lastPauseAt = 0;
  watcher.on("put", (kv) => {
    const holder = kv.value.toString("utf8");
    const [host, pidText] = holder.split(":");
    const entry = running.get(Number(pidText));
    if (host !== hostname() || !entry || pauses >= maxPauses || Date.now() - lastPauseAt < 8_000)
      return;
    pauses += 1;
    lastPauseAt = Date.now();
    entry.attempt.paused = true;
    entry.proc.signal("SIGSTOP");
    ctx.progress(`SIGSTOP lock holder pid ${entry.proc.pid} for ${LOCK_TTL_S + 2} s`);
    setTimeout(() => entry.proc.signal("SIGCONT"), (LOCK_TTL_S + 2) * 1000);
  });

  await Promise.all(
    [0, 1, 2, 3].map(async (loop) => {
      for (let iter = 0; Date.now() < deadline; iter++) {
        const marker = `w${loop}-${iter}`;
        const desired = desiredFor(marker);
        const file = join(dir, `${marker}.yaml`);
        writeFileSync(file, stringify(desired));
        const state = { paused: false };
        const proc = spawnOwned(
          `apply ${marker}`,
          process.execPath,
          [edgectlScript, "apply", file, "--yes"],
          { env, cwd: ROOT },
        );
        ctx.defer(() => proc.stop(1_000));
        let stdout = "";
        let stderr = "";
        proc.child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
        proc.child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
        running.set(proc.pid, { proc, attempt: state });
        // 'exit' can come before the pipes are drained: the last line ("Applied …", written just
        // before the exit) would be missing; 'close' comes once stdout and stderr have ended.
        const closed = new Promise<void>((r) => proc.child.once("close", () => r()));
        const { code } = await proc.exited;
        await closed;
        running.delete(proc.pid);
        ctx.transcript.add(`edgectl apply ${marker}`, "cli", stdout + stderr);
        const applied = parseApplied(stdout);
        const c = code ?? -1;
        if (STACK_FRAME.test(stderr)) stacks += 1;
        if (![0, 2, 3].includes(c) && !state.paused)
          unexpected.push(`${marker} exited ${c}: ${stderr.trim().split("\n")[0]}`);
        attempts.push({
          loop,
          marker,
          desired,
          code: c,
          stdout,
          stderr,
          paused: state.paused,
          epoch: applied?.epoch ?? null,
          revision: applied?.revision ?? null,
        });
      }
    }),
  );
  const verdict = await judgeApplies(client, prefix, startRev, attempts, `${prefix}pool/fra-1`);
  return { attempts, pauses, verdict, stacks, unexpected };
}

export const concurrentOperators: Scenario = {
  id: 8,
  title: "Concurrent operators",
  invariant:
    "4 edgectl apply loops for 60 s, a lock holder SIGSTOP'd past the lock TTL: 0 lost updates; epoch +1 exactly once per successful apply; final state = last successful apply (and a broken CAS is caught)",
  budgetMs: (q) => (q ? 120_000 : 240_000),
  async run(ctx) {
    const seconds = ctx.quick ? 20 : 60;
    const inv = new Invariants();
    const etcd = await scenarioEtcd(ctx);
    const client = testClient(ctx, etcd.endpoint);
    // The mutation check runs alongside: the same loops against an edgectl whose apply skips the
    // epoch compare (on its own prefix, without pauses). The checker must flag it.
    const mutant = await buildCasMutant();
    ctx.defer(() => mutant.remove());
    const [real, broken] = await Promise.all([
      applyLoops(
        ctx,
        etcd,
        client,
        join(ROOT, "bin/edgectl.js"),
        seconds * 1000,
        ctx.quick ? 1 : 3,
      ),
      applyLoops(ctx, etcd, client, mutant.script, seconds * 1000, 0),
    ]);
    for (const v of real.verdict.violations) inv.check(false, "apply invariant broken", () => v);
    inv.check(
      real.pauses > 0,
      "no lock holder was paused (the attack did not happen)",
      () => "0 pauses",
    );
    inv.check(
      real.verdict.successes > 0,
      "no apply succeeded",
      () => `${real.attempts.length} attempts`,
    );
    inv.check(real.stacks === 0, "stack trace printed", () => `${real.stacks}`);
    for (const u of real.unexpected) inv.check(false, "unexpected exit code", () => u);
    const paused = real.attempts.filter((a) => a.paused).map((a) => `${a.marker}→exit ${a.code}`);
    // Past acquisition (the lock key was written), a paused holder either committed before the
    // pause (0) or finds the lock gone (2, conflict); anything else breaks the exit-code contract.
    for (const a of real.attempts.filter((x) => x.paused)) {
      inv.check(
        a.code === 0 || a.code === 2,
        "paused lock holder did not exit 0 or 2 (conflict)",
        () => `${a.marker} exited ${a.code}: ${a.stderr.trim().split("\n")[0] ?? ""}`,
      );
    }
    const codes = (run: LoopRun) =>
      [0, 1, 2, 3].map((c) => `${c}:${run.attempts.filter((a) => a.code === c).length}`).join(" ");

    const caught = broken.verdict.violations.length > 0;
    inv.check(
      caught,
      "a broken CAS (epoch compare disabled) was NOT caught by this scenario",
      () => `${broken.verdict.successes} mutant applies, no violation`,
    );
    return {
      runs: real.attempts.length,
      figure: `${real.attempts.length} applies in ${seconds} s (exit ${codes(real)}), ${real.pauses} holder(s) SIGSTOP'd (${paused.join(", ")}), lost updates ${real.verdict.lostUpdates}, epoch bumps ${real.verdict.epochBumps}/${real.verdict.successes} successes; broken-CAS mutant ${caught ? `caught (${broken.verdict.violations.length} violations)` : "NOT caught"}`,
      failures: inv.failures(),
      notes: [
        ...real.attempts
          .filter((a) => a.paused)
          .map(
            (a) =>
              `paused holder ${a.marker} exited ${a.code}: ${a.stderr.trim().split("\n")[0] ?? ""}`,
          ),
        `broken-CAS mutant: ${broken.attempts.length} applies (exit ${codes(broken)}), lost updates ${broken.verdict.lostUpdates}; first violations: ${broken.verdict.violations.slice(0, 2).join("; ") || "none"}`,
      ],
    };
  },
};
