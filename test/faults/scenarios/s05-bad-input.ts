import { writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Etcd3 } from "etcd3";
import { expectedMap, readSnapshot, waitConverged } from "../../../testkit/map-oracle.js";
import { COUNTRIES } from "../../../testkit/sample-countries.js";
import { startWorker } from "../../../testkit/worker.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import { badFiles, badValues } from "../support/bad-values.js";
import {
  type CtlResult,
  edgectlBinary,
  edgectlInProcess,
  STACK_FRAME,
} from "../support/edgectl.js";
import { names, scenarioEtcd, seedWorld, testClient } from "../support/etcd-world.js";
import { kvRevision, startRecordedKv } from "../support/kv-recorder.js";
import { startScenarioPusher } from "../support/pusher-process.js";

/** The prefix's content as one comparable string (key, mod revision). */
async function fingerprint(client: Etcd3, prefix: string): Promise<string> {
  const res = await client.getAll().prefix(prefix).exec();
  return res.kvs.map((kv) => `${kv.key.toString("utf8")}@${kv.mod_revision}`).join("|");
}

export const badInput: Scenario = {
  id: 5,
  title: "Bad input",
  invariant:
    "200 malformed etcd values: every good country routes exactly as before and every bad key is named in `problems`; 200 malformed files: edgectl validate/apply exit 1 naming the problem, no write, no stack trace",
  budgetMs: (q) => (q ? 150_000 : 300_000),
  async run(ctx) {
    const inv = new Invariants();
    const etcd = await scenarioEtcd(ctx);
    const client = testClient(ctx, etcd.endpoint);
    const { prefix, electionKey } = names("bad");
    const good = COUNTRIES.slice(0, 10);
    await seedWorld(client, prefix, good.length);
    const kv = await startRecordedKv(ctx);
    const pusher = await startScenarioPusher(ctx, {
      id: "bad-1",
      etcdEndpoint: etcd.endpoint,
      prefix,
      electionKey,
      electionTtl: 3,
      kvEnv: kv.env(),
    });
    await pusher.ready();
    const baseline = await expectedMap(client, prefix);
    if ((await waitConverged(() => kv.routes(), baseline, 30_000)) === null) {
      return {
        runs: 0,
        figure: "pusher never pushed the good baseline",
        failures: ["baseline not in KV within 30 s"],
      };
    }
    const before = kv.routes();
    if (!before) throw new Error("no baseline");

    // Part 1: 200 malformed values straight into etcd.
    const bad = badValues(good);
    for (let i = 0; i < bad.length; i += 20) {
      await Promise.all(
        bad.slice(i, i + 20).map((b) => client.put(`${prefix}${b.rel}`).value(b.value).exec()),
      );
    }
    const finalRev = (await readSnapshot(client, prefix)).revision;
    const started = Date.now();
    let after = kv.routes();
    while (Date.now() - started < 20_000) {
      after = kv.routes();
      if (after && kvRevision(kv) >= finalRev) break;
      await sleep(100);
    }
    const settledIn = Date.now() - started;
    if (!after || kvRevision(kv) < finalRev) {
      inv.check(
        false,
        "KV never reached the revision of the bad writes",
        () => `KV rev ${kvRevision(kv)}, etcd ${finalRev}`,
      );
    } else {
      for (const cc of [...good, "_default"]) {
        const was = cc === "_default" ? before.default : before.countries[cc];
        const now = cc === "_default" ? after.default : after.countries[cc];
        inv.check(
          JSON.stringify(was) === JSON.stringify(now),
          "good country re-routed",
          () => `${cc}: ${was?.pool}→${now?.pool ?? "(gone)"} (${now?.source})`,
        );
      }
      for (const b of bad) {
        const named = after.problems.some((p) => p.startsWith(`${b.rel}: `));
        inv.check(
          named,
          "bad key not named in problems",
          () => `${b.kind} at ${JSON.stringify(b.rel)}`,
        );
      }
      const status = await pusher.status();
      inv.check(
        (status?.problems.length ?? 0) >= bad.length,
        "pusher /status lists fewer problems than bad keys",
        () => `${status?.problems.length}`,
      );
      // The same map through the Worker: each good country's decision is unchanged.
      const worker = await startWorker({ DEBUG_TOKEN: "bad-input-debug-token" });
      ctx.defer(() => worker.dispose());
      ctx.transcript.secret("DEBUG_TOKEN (bad input)", "bad-input-debug-token");
      const text = kv.standin.values.get("routes") ?? "";
      await worker.putMap(text);
      for (const cc of good) {
        const res = await worker.dispatch("/__edge/route", {
          country: cc,
          headers: { "X-Edge-Debug-Token": "bad-input-debug-token" },
        });
        const pool =
          res.status === 200
            ? res.json<{ route?: { pool?: string } }>().route?.pool
            : `status ${res.status}`;
        inv.check(
          pool === before.countries[cc]?.pool,
          "Worker routes a good country differently",
          () => `${cc}: ${pool} ≠ ${before.countries[cc]?.pool}`,
        );
      }
    }
    await pusher.proc.stop();

    // Part 2: 200 malformed desired-state files through edgectl validate and apply.
    const dir = await mkdtemp(join(tmpdir(), "faults-files-"));
    ctx.defer(() => rm(dir, { recursive: true, force: true }));
    const env = {
      ETCD_ENDPOINTS: etcd.endpoint,
      ROUTING_PREFIX: prefix,
      EDGECTL_ETCD_TIMEOUT_MS: "3000",
    };
    const files = badFiles();
    const fpBefore = await fingerprint(client, prefix);
    const revBefore = (await readSnapshot(client, prefix)).revision;
    const judge = (f: (typeof files)[number], path: string, cmd: string, r: CtlResult) => {
      const what = `${cmd} ${f.kind} (${path.split("/").pop()})`;
      inv.check(
        r.code === 1,
        "edgectl did not exit 1",
        () => `${what} → ${r.code}: ${r.stderr.slice(0, 120)}`,
      );
      inv.check(
        f.expect.test(r.stderr),
        "edgectl did not name the problem",
        () => `${what}: wanted ${f.expect} in ${JSON.stringify(r.stderr.slice(0, 160))}`,
      );
      inv.check(
        !STACK_FRAME.test(r.stderr + r.stdout),
        "stack trace printed",
        () => `${what}: ${r.stderr.slice(0, 200)}`,
      );
    };
    const sampleEvery = ctx.quick ? 100 : 10;
    let binaryRuns = 0;
    for (const [i, f] of files.entries()) {
      const path = join(dir, `bad-${i}.${i % 3 === 0 ? "json" : "yaml"}`);
      writeFileSync(path, f.content);
      judge(f, path, "validate", await edgectlInProcess(ctx, ["validate", path], env));
      judge(f, path, "apply", await edgectlInProcess(ctx, ["apply", path, "--yes"], env));
      if (i % sampleEvery === 0) {
        binaryRuns += 1;
        judge(f, path, "bin validate", await edgectlBinary(ctx, ["validate", path], env));
        judge(f, path, "bin apply", await edgectlBinary(ctx, ["apply", path, "--yes"], env));
      }
    }
    const fpAfter = await fingerprint(client, prefix);
    const revAfter = (await readSnapshot(client, prefix)).revision;
    inv.check(
      fpBefore === fpAfter && revBefore === revAfter,
      "a malformed file wrote to etcd",
      () => `revision ${revBefore}→${revAfter}`,
    );
    // Positive control: the same harness sees a valid file pass, so exit 1 above is not a given.
    const okPath = join(dir, "valid.yaml");
    writeFileSync(
      okPath,
      "pools:\n  ams-1: { origin: https://ams-1.example.net }\ncountries:\n  _default: { primary: ams-1 }\n",
    );
    const ok = await edgectlInProcess(ctx, ["validate", okPath], env);
    inv.check(ok.code === 0, "control: a valid file does not validate", () =>
      ok.stderr.slice(0, 200),
    );

    const kinds = new Set(bad.map((b) => b.kind)).size;
    return {
      runs: bad.length + files.length,
      figure: `${bad.length} bad values (${kinds} kinds) → ${inv.count("good country re-routed")} re-routed, ${inv.count("bad key not named in problems")} unnamed, ${after?.problems.length ?? 0} problems in the map, settled in ${secs(settledIn)}; ${files.length} bad files ×2 cmds (+${binaryRuns}×2 via the binary) → ${inv.count("edgectl did not exit 1")} wrong exits, ${inv.count("stack trace printed")} stacks, writes: ${revAfter - revBefore}`,
      failures: inv.failures(),
    };
  },
};
