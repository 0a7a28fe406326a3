import { hostname, userInfo } from "node:os";
import { describe, expect, it } from "vitest";
import { auditKey, auditValueOf } from "../../edgectl/audit/audit-record.js";
import { applyAll, auditScope, intentOf, recordsOf, variant } from "./audit-support.js";
import { exampleState, runCli, useCliSuite } from "./cli-harness.js";

const suite = useCliSuite();

/** Every record's changes are exactly the intent diff between its commit revision and the one before. */
async function expectRecordsMatchEtcd(prefix: string, auditPrefix: string): Promise<void> {
  const records = await recordsOf(suite.client, auditPrefix);
  for (const { record, commitRevision } of records) {
    const was = await intentOf(suite.client, prefix, commitRevision - 1);
    const now = await intentOf(suite.client, prefix, commitRevision);
    const keys = [...new Set([...Object.keys(was), ...Object.keys(now)])].sort();
    const real = keys
      .filter((k) => was[k] !== now[k])
      .map((key) => ({ key, before: auditValueOf(was[key]), after: auditValueOf(now[key]) }));
    expect(record.changes, `epoch ${record.epoch}`).toEqual(real);
    expect(real.length).toBeGreaterThan(0);
    const epochAt = await suite.client.get(`${prefix}epoch`).revision(commitRevision).string();
    expect(epochAt).toBe(String(record.epoch));
  }
}

describe("audit records", () => {
  it("apply writes {AUDIT_PREFIX}{12-digit epoch} in the epoch's transaction: rev, at, by, command, reason", async () => {
    const { prefix, auditPrefix, env } = auditScope(suite, "rec", { EDGECTL_USER: "alice" });
    const before = Date.now();
    await applyAll(suite, env, [exampleState(), variant(1)]);
    const records = await recordsOf(suite.client, auditPrefix);
    expect(records.map((r) => r.key)).toEqual([auditKey(auditPrefix, 1), auditKey(auditPrefix, 2)]);
    expect(auditKey(auditPrefix, 2)).toBe(`${auditPrefix}000000000002`);
    const epochKv = (await suite.client.get(`${prefix}epoch`).exec()).kvs[0];
    const last = records[1];
    // written by the same transaction as the epoch bump: the same mod revision
    expect(last?.commitRevision).toBe(Number(epochKv?.mod_revision));
    for (const [i, { record, commitRevision }] of records.entries()) {
      expect(record).toMatchObject({
        epoch: i + 1,
        by: "alice",
        command: "apply",
        reason: `step ${i + 1}`,
      });
      // rev is the read the plan was made from: before the commit, nothing intent-wise between
      expect(record.rev).toBeLessThan(commitRevision);
      expect(await intentOf(suite.client, prefix, record.rev)).toEqual(
        await intentOf(suite.client, prefix, commitRevision - 1),
      );
      expect(Date.parse(record.at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(record.at)).toBeLessThanOrEqual(Date.now());
    }
    // a no-op apply bumps nothing and records nothing
    const again = await runCli(["apply", suite.files.write(variant(1)), "--yes"], { env });
    expect(again.code).toBe(0);
    expect(await recordsOf(suite.client, auditPrefix)).toHaveLength(2);
  });

  it("by is the OS user@host without EDGECTL_USER, and reason is null without --reason", async () => {
    const { auditPrefix, env } = auditScope(suite, "by");
    delete env.EDGECTL_USER;
    const r = await runCli(["apply", suite.files.write(exampleState()), "--yes"], { env });
    expect(r.code, r.stderr).toBe(0);
    const [only] = await recordsOf(suite.client, auditPrefix);
    expect(only?.record.by).toBe(`${userInfo().username}@${hostname()}`);
    expect(only?.record.reason).toBeNull();
  });

  it("every record's changes equal the epoch's real diff between its etcd revisions", async () => {
    const { prefix, auditPrefix, env } = auditScope(suite, "diff");
    await applyAll(suite, env, [exampleState(), variant(1), variant(2), exampleState()]);
    const moved = await runCli(["move", "FR,EU", "--to", "par-1", "--yes"], { env });
    expect(moved.code, moved.stderr).toBe(0);
    const back = await runCli(["rollback", "2", "--yes"], { env });
    expect(back.code, back.stderr).toBe(0);
    const records = await recordsOf(suite.client, auditPrefix);
    expect(records.map((r) => r.record.command)).toEqual([
      "apply",
      "apply",
      "apply",
      "apply",
      "move",
      "rollback",
    ]);
    await expectRecordsMatchEtcd(prefix, auditPrefix);
  });

  it("concurrent applies: one record per epoch step, contiguous, each equal to its real diff", async () => {
    const { prefix, auditPrefix, env } = auditScope(suite, "race");
    await applyAll(suite, env, [exampleState()]);
    const results = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((i) =>
        runCli(["apply", suite.files.write(variant(i)), "--yes"], { env }),
      ),
    );
    for (const r of results) expect([0, 2, 3], r.stderr).toContain(r.code);
    const wins = results.filter((r) => r.code === 0).length;
    expect(wins).toBeGreaterThanOrEqual(1);
    const epochs = (await recordsOf(suite.client, auditPrefix)).map((r) => r.record.epoch);
    expect(epochs).toEqual(Array.from({ length: 1 + wins }, (_, k) => k + 1));
    expect(await suite.client.get(`${prefix}epoch`).string()).toBe(String(1 + wins));
    await expectRecordsMatchEtcd(prefix, auditPrefix);
  });

  it("keeps the newest EDGECTL_AUDIT_KEEP records, pruned in the commit", async () => {
    const { auditPrefix, env } = auditScope(suite, "keep", { EDGECTL_AUDIT_KEEP: "3" });
    await applyAll(suite, env, [1, 2, 3, 4, 5].map(variant));
    const records = await recordsOf(suite.client, auditPrefix);
    expect(records.map((r) => r.record.epoch)).toEqual([3, 4, 5]);
    // pruning happened in the commit of epoch 5 itself: the record of 2 was deleted at its revision
    const epoch2At = (rev: number) =>
      suite.client.get(auditKey(auditPrefix, 2)).revision(rev).string();
    const rev5 = records[2]?.commitRevision ?? 0;
    expect(await epoch2At(rev5 - 1)).not.toBeNull();
    expect(await epoch2At(rev5)).toBeNull();
  });

  it("refuses a change set whose commit (changes, epoch, record, pruning) exceeds EDGECTL_MAX_TXN_OPS", async () => {
    const { prefix, auditPrefix, env } = auditScope(suite, "ops", { EDGECTL_MAX_TXN_OPS: "7" });
    // 5 keys + 3 = 8 > 7
    const r = await runCli(["apply", suite.files.write(exampleState()), "--yes"], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("5 changes and 3 more operations (epoch, audit record, pruning)");
    expect(await intentOf(suite.client, prefix)).toEqual({});
    expect(await recordsOf(suite.client, auditPrefix)).toEqual([]);
    const ok = await runCli(["apply", suite.files.write(exampleState()), "--yes"], {
      env: { ...env, EDGECTL_MAX_TXN_OPS: "8" },
    });
    expect(ok.code, ok.stderr).toBe(0);
  });

  it("AUDIT_PREFIX must lie outside the routing prefix", async () => {
    const { prefix, env } = auditScope(suite, "overlap");
    const r = await runCli(["history"], { env: { ...env, AUDIT_PREFIX: `${prefix}audit/` } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("AUDIT_PREFIX");
    expect(r.stderr).toContain("overlaps the routing prefix");
  });
});
