import { PassThrough } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EtcdMembers, memberTimeouts } from "../../adapters/etcd-members.js";
import { readPrefix } from "../../adapters/prefix-read.js";
import { type DesiredState, desiredStateToKeys } from "../../core/index.js";
import { acquireApplyLock } from "../../edgectl/apply/apply-lock.js";
import { commitApply, epochAtRead, settleCommit } from "../../edgectl/apply/commit.js";
import { diffIntent } from "../../edgectl/apply/plan-diff.js";
import { auditStamp } from "../../edgectl/audit/audit-write.js";
import { cliSettingsFromEnv } from "../../edgectl/cli/cli-settings.js";
import { run } from "../../edgectl/run.js";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { exampleState, runBin, runCli, tempFiles, uniquePrefix, waitFor } from "./cli-harness.js";

let etcd: EtcdServer;
let client: Etcd3;
/** edgectl's own view of the same etcd, for driving the lock and commit steps one by one. */
let members: EtcdMembers;
const files = tempFiles();

beforeAll(async () => {
  etcd = await startEtcd();
  client = new Etcd3({ hosts: etcd.endpoint });
  members = EtcdMembers.open(cliSettingsFromEnv({ ETCD_ENDPOINTS: etcd.endpoint }));
});
afterAll(async () => {
  members?.close();
  client?.close();
  await etcd?.stop();
  files.cleanup();
});

/** The audit stamp of a commit driven by hand, as `apply` would make it from a read. */
const stampOf = (rev: number) =>
  auditStamp(
    { auditPrefix: "/edgectl-test-audit/by-hand/", auditKeep: 1000, user: "test" },
    "apply",
    undefined,
    rev,
  );

const envFor = (prefix: string, extra: Record<string, string> = {}) => ({
  ETCD_ENDPOINTS: etcd.endpoint,
  ROUTING_PREFIX: prefix,
  ...extra,
});

/** Every key under the prefix as rel → value. */
async function dump(prefix: string): Promise<Record<string, string>> {
  const all = await client.getAll().prefix(prefix).strings();
  return Object.fromEntries(Object.entries(all).map(([k, v]) => [k.slice(prefix.length), v]));
}

/** The intent keys (pool/, country/) under the prefix. */
async function intent(prefix: string): Promise<Record<string, string>> {
  const all = await dump(prefix);
  return Object.fromEntries(
    Object.entries(all).filter(([k]) => k.startsWith("pool/") || k.startsWith("country/")),
  );
}

function expectedIntent(state: DesiredState, prefix: string): Record<string, string> {
  return Object.fromEntries(
    [...desiredStateToKeys(state, prefix)].map(([k, v]) => [k.slice(prefix.length), v]),
  );
}

/** A distinct desired state per index: DE goes to its own pool. */
function variant(i: number): DesiredState {
  const base = exampleState();
  return {
    pools: { ...base.pools, [`v-${i}`]: { origin: `https://v-${i}.origin.example.com` } },
    countries: { ...base.countries, DE: { primary: `v-${i}`, fallbacks: ["fra-1"] } },
  };
}

describe("edgectl apply", () => {
  it("applies (0), is a no-op the second time, bumps epoch, and leaves overrides/health untouched", async () => {
    const prefix = uniquePrefix("apply");
    const env = envFor(prefix);
    await client
      .put(`${prefix}override/FR`)
      .value('{"primary":"ams-1","fallbacks":[],"reason":"x"}');
    await client.put(`${prefix}health/fra-1`).value('{"status":"healthy"}');
    await client.put(`${prefix}country/IT`).value('{"primary":"par-1","fallbacks":[]}');
    const f = files.write(exampleState());
    const r = await runCli(["apply", f, "--yes"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Applied 6 changes: epoch 1");
    const after = await dump(prefix);
    expect(after.epoch).toBe("1");
    expect(after["country/IT"]).toBeUndefined();
    expect(after["override/FR"]).toBe('{"primary":"ams-1","fallbacks":[],"reason":"x"}');
    expect(after["health/fra-1"]).toBe('{"status":"healthy"}');
    expect(after["lock/apply"]).toBeUndefined();
    expect(await intent(prefix)).toEqual(expectedIntent(exampleState(), prefix));

    const rev = (await client.get(`${prefix}epoch`).exec()).header.revision;
    const again = await runCli(["apply", f, "--yes"], { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("No changes");
    const rev2 = (await client.get(`${prefix}epoch`).exec()).header.revision;
    expect(rev2).toBe(rev);
  });

  it("exits 1 for an invalid file and writes nothing", async () => {
    const prefix = uniquePrefix("invalid");
    const bad = files.write({ pools: {}, countries: { _default: { primary: "nope" } } });
    const r = await runCli(["apply", bad, "--yes"], { env: envFor(prefix) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('countries._default.primary: unknown pool "nope"');
    expect(await dump(prefix)).toEqual({});
  });

  it("validates the whole proposed state: removing a pool an active override names exits 1", async () => {
    const prefix = uniquePrefix("whole");
    const env = envFor(prefix);
    expect((await runCli(["apply", files.write(exampleState()), "--yes"], { env })).code).toBe(0);
    await client
      .put(`${prefix}override/FR`)
      .value('{"primary":"par-1","fallbacks":[],"reason":"x"}');
    const before = await dump(prefix);
    const base = exampleState();
    const withoutPar = {
      pools: { "fra-1": base.pools["fra-1"], "ams-1": base.pools["ams-1"] },
      countries: {
        _default: { primary: "ams-1", fallbacks: [] },
        DE: { primary: "fra-1", fallbacks: ["ams-1"] },
      },
    };
    const f = files.write(withoutPar);
    const plan = await runCli(["plan", f], { env });
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain('override/FR: names undefined pool "par-1"');
    const r = await runCli(["apply", f, "--yes"], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("whole proposed state is invalid");
    expect(r.stderr).toContain('override/FR: names undefined pool "par-1"');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(await dump(prefix)).toEqual(before);
  });

  it("refuses without a TTY and without --yes (exit 1), and asks on a TTY", async () => {
    const prefix = uniquePrefix("tty");
    const f = files.write(exampleState());
    const refused = await runCli(["apply", f], { env: envFor(prefix) });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("stdin is not a terminal (pass --yes)");
    const no = await runCli(["apply", f], { env: envFor(prefix), isTTY: true, stdin: "n\n" });
    expect(no.code).toBe(1);
    expect(no.stdout).toContain("Apply 5 changes? [y/N]");
    expect(await dump(prefix)).toEqual({});
    const yes = await runCli(["apply", f], { env: envFor(prefix), isTTY: true, stdin: "y\n" });
    expect(yes.code, yes.stderr).toBe(0);
    expect(await intent(prefix)).toEqual(expectedIntent(exampleState(), prefix));
  });

  it("exits 3 while another holder has lock/apply, and writes nothing", async () => {
    const prefix = uniquePrefix("locked");
    const held = await acquireApplyLock(members, prefix, 10, "someone-else");
    expect(held.ok).toBe(true);
    try {
      const r = await runCli(["apply", files.write(exampleState()), "--yes"], {
        env: envFor(prefix),
      });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain("lock/apply is held by someone-else");
      expect(await intent(prefix)).toEqual({});
      expect((await dump(prefix))["lock/apply"]).toBe("someone-else");
    } finally {
      if (held.ok) await held.lock.release();
    }
  });

  it("exits 2 when the epoch moved while the operator was at the prompt", async () => {
    const prefix = uniquePrefix("conflict");
    const env = envFor(prefix);
    expect((await runCli(["apply", files.write(exampleState()), "--yes"], { env })).code).toBe(0);
    const stdin = new PassThrough();
    let out = "";
    let err = "";
    const slow = run(["apply", files.write(variant(1))], {
      env,
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: (s: string) => (err += s) },
      stdin,
      isTTY: true,
    });
    expect(await waitFor(() => out.includes("[y/N]"), 20_000)).toBe(true);
    const other = await runCli(["apply", files.write(variant(2)), "--yes"], { env });
    expect(other.code).toBe(0);
    stdin.end("yes\n");
    expect(await slow).toBe(2);
    expect(err).toContain("conflict: epoch moved from 1 to 2");
    expect(await intent(prefix)).toEqual(expectedIntent(variant(2), prefix));
    expect((await dump(prefix)).epoch).toBe("2");
  });

  it("concurrent applies of different files: one win per epoch step, losers 2 or 3, no partial writes", async () => {
    const prefix = uniquePrefix("race");
    const env = envFor(prefix);
    expect((await runCli(["apply", files.write(exampleState()), "--yes"], { env })).code).toBe(0);
    const paths = Array.from({ length: 10 }, (_, i) => files.write(variant(i)));
    // staggered a little, so some read before a winner commits and lock after it released (→ 2)
    const inProcess = paths
      .slice(0, 8)
      .map((p, i) => sleep(i * 7).then(() => runCli(["apply", p, "--yes"], { env })));
    const children = paths.slice(8).map((p) => runBin(["apply", p, "--yes"], env));
    const results = await Promise.all([...inProcess, ...children]);
    const codes = results.map((r) => r.code);
    for (const r of results) expect([0, 2, 3], r.stderr).toContain(r.code);
    const winners = results
      .map((r, i) => ({ i, r }))
      .filter(({ r }) => r.code === 0)
      .map(({ i, r }) => ({
        i,
        epoch: Number(/epoch (\d+)/.exec(r.stdout.split("Applied")[1] ?? "")?.[1]),
      }));
    expect(winners.length, JSON.stringify(codes)).toBeGreaterThanOrEqual(1);
    const epochs = winners.map((w) => w.epoch).sort((a, b) => a - b);
    // exactly one winner per epoch step, contiguous from the base epoch
    expect(epochs).toEqual(Array.from({ length: winners.length }, (_, k) => k + 2));
    const final = await dump(prefix);
    expect(Number(final.epoch)).toBe(1 + winners.length);
    const last = winners.find((w) => w.epoch === 1 + winners.length);
    expect(await intent(prefix)).toEqual(expectedIntent(variant(last?.i ?? -1), prefix));
    expect(final["lock/apply"]).toBeUndefined();
  });

  it("a paused holder whose lease lapsed: apply proceeds, and the old holder's commit fails", async () => {
    const prefix = uniquePrefix("paused");
    const env = envFor(prefix, { EDGECTL_LOCK_TTL: "2" });
    expect((await runCli(["apply", files.write(exampleState()), "--yes"], { env })).code).toBe(0);
    // the old holder reads, takes the lock, then stops (no more keepalives: a paused process)
    const oldRead = await readPrefix(client, prefix);
    const oldChanges = diffIntent(oldRead, variant(7), prefix);
    const old = await acquireApplyLock(members, prefix, 2, "old-holder");
    if (!old.ok) throw new Error("old holder could not lock");
    old.lock.lease.stop();
    const blocked = await runCli(["apply", files.write(variant(8)), "--yes"], { env });
    expect(blocked.code).toBe(3);
    expect(
      await waitFor(async () => (await dump(prefix))["lock/apply"] === undefined, 15_000),
    ).toBe(true);
    const fresh = await runCli(["apply", files.write(variant(8)), "--yes"], { env });
    expect(fresh.code, fresh.stderr).toBe(0);
    // the old holder resumes and commits with what it had
    const late = await commitApply(
      members,
      prefix,
      old.lock,
      epochAtRead(oldRead),
      oldChanges,
      stampOf(oldRead.revision),
      5000,
    );
    expect(late).toMatchObject({ ok: false, reason: "lock-lost" });
    expect(await intent(prefix)).toEqual(expectedIntent(variant(8), prefix));
    expect((await dump(prefix)).epoch).toBe("2");
  });

  it("a lock reply lost in a pause past the TTL, re-sent after the next holder took it: lapsed, not locked", async () => {
    const prefix = uniquePrefix("resent-lock");
    const key = `${prefix}lock/apply`;
    const clients = [new Etcd3({ hosts: etcd.endpoint })];
    // The first send lands; the process stops until its lease has expired and another holder
    // has the lock; its re-send (the reply counted lost) then reads the other holder.
    class PausedAfterFirstSend extends EtcdMembers {
      override async any<T>(
        operation: string,
        fn: (client: Etcd3, call: { deadline: number }) => Promise<T>,
      ): Promise<T> {
        if (operation !== "take lock/apply") return super.any(operation, fn);
        await super.any(operation, fn);
        expect(await client.get(key).string()).toBe("paused-holder");
        expect(await waitFor(async () => (await client.get(key).string()) === null, 15_000)).toBe(
          true,
        );
        const next = await acquireApplyLock(members, prefix, 30, "next-holder");
        expect(next.ok).toBe(true);
        return super.any(operation, fn);
      }
    }
    const paused = new PausedAfterFirstSend([etcd.endpoint], clients, memberTimeouts(5000));
    try {
      expect(await acquireApplyLock(paused, prefix, 2, "paused-holder")).toEqual({
        ok: false,
        lapsed: true,
      });
      expect(await client.get(key).string()).toBe("next-holder");
      // a sender whose lease is alive finds the same holder: that is "locked", named
      expect(await acquireApplyLock(members, prefix, 30, "live-holder")).toEqual({
        ok: false,
        heldBy: "next-holder",
      });
    } finally {
      paused.close();
    }
  });

  it("a lost commit reply is settled: fenced off when it did not land, from history when it did", async () => {
    const prefix = uniquePrefix("uncertain");
    const env = envFor(prefix);
    expect((await runCli(["apply", files.write(exampleState()), "--yes"], { env })).code).toBe(0);
    const read = await readPrefix(client, prefix);
    const epoch = epochAtRead(read);
    const changes = diffIntent(read, variant(1), prefix);

    // nothing committed yet: settlement revokes the lock, so the commit can never land later
    const fenced = await acquireApplyLock(members, prefix, 30, "fenced-holder");
    if (!fenced.ok) throw new Error("could not lock");
    expect(await settleCommit(members, prefix, fenced.lock, epoch, changes, 5000)).toEqual({
      ok: false,
      reason: "not-landed",
      epochNow: "1",
    });
    expect((await dump(prefix))["lock/apply"]).toBeUndefined();
    // the same transaction arriving late (still in flight when settled) writes nothing
    const lateArrival = await commitApply(
      members,
      prefix,
      fenced.lock,
      epoch,
      changes,
      stampOf(read.revision),
      5000,
    );
    expect(lateArrival).toMatchObject({ ok: false, reason: "lock-lost" });
    expect((await dump(prefix)).epoch).toBe("1");

    const held = await acquireApplyLock(members, prefix, 30, "paused-holder");
    if (!held.ok) throw new Error("could not lock");
    const landed = await commitApply(
      members,
      prefix,
      held.lock,
      epoch,
      changes,
      stampOf(read.revision),
      5000,
    );
    expect(landed.ok).toBe(true);
    await held.lock.release();
    // its reply was "lost" and two more applies came after it
    for (const i of [2, 3])
      expect((await runCli(["apply", files.write(variant(i)), "--yes"], { env })).code).toBe(0);
    const settled = await settleCommit(members, prefix, held.lock, epoch, changes, 5000);
    expect(settled).toEqual({
      ok: true,
      epoch: epoch.value + 1,
      revision: landed.ok ? landed.revision : -1,
    });

    // another holder's commit at the same epoch step is not mistaken for this one
    const read2 = await readPrefix(client, prefix);
    const epoch2 = epochAtRead(read2);
    const mine = diffIntent(read2, variant(4), prefix);
    const other = await acquireApplyLock(members, prefix, 30, "other-holder");
    if (!other.ok) throw new Error("could not lock");
    const theirs = await commitApply(
      members,
      prefix,
      other.lock,
      epoch2,
      diffIntent(read2, variant(5), prefix),
      stampOf(read2.revision),
      5000,
    );
    expect(theirs.ok).toBe(true);
    await other.lock.release();
    const notMine = await settleCommit(
      members,
      prefix,
      {
        holder: "paused-holder-2",
        createRevision: other.lock.createRevision,
        lease: other.lock.lease,
      },
      epoch2,
      mine,
      5000,
    );
    expect(notMine).toMatchObject({ ok: false, reason: "epoch-moved" });

    // a lock that lapsed by itself, with the epoch unchanged: a conflict, not "etcd unavailable"
    const read3 = await readPrefix(client, prefix);
    const lapsed = await acquireApplyLock(members, prefix, 2, "lapsed-holder");
    if (!lapsed.ok) throw new Error("could not lock");
    lapsed.lock.lease.stop();
    expect(
      await waitFor(async () => (await dump(prefix))["lock/apply"] === undefined, 15_000),
    ).toBe(true);
    expect(
      await settleCommit(
        members,
        prefix,
        lapsed.lock,
        epochAtRead(read3),
        diffIntent(read3, variant(6), prefix),
        5000,
      ),
    ).toMatchObject({ ok: false, reason: "lock-lost" });

    // with the history compacted away, it says it does not know (never "nothing written")
    const { header } = await client.get(`${prefix}epoch`).exec();
    await client.kv.compact({ revision: header.revision, physical: true });
    const unknown = await settleCommit(members, prefix, held.lock, epoch, changes, 5000);
    expect(unknown).toMatchObject({ ok: false, reason: "unknown" });
  });

  it("export prints a file that validates and that apply turns into a no-op", async () => {
    const prefix = uniquePrefix("export");
    const env = envFor(prefix);
    expect((await runCli(["apply", files.write(variant(3)), "--yes"], { env })).code).toBe(0);
    // a key written by hand, with a different key order, is still the same intent
    await client.put(`${prefix}country/FR`).value('{"fallbacks":["par-1"],"primary":"fra-1"}');
    const exp = await runCli(["export"], { env });
    expect(exp.code, exp.stderr).toBe(0);
    const f = files.write(exp.stdout);
    expect((await runCli(["validate", f], { env: {} })).code).toBe(0);
    const before = (await client.get(`${prefix}epoch`).exec()).header.revision;
    const again = await runCli(["apply", f, "--yes"], { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("No changes");
    expect((await client.get(`${prefix}epoch`).exec()).header.revision).toBe(before);
  });
});
