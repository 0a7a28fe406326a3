import type { Etcd3 } from "etcd3";
import { expect } from "vitest";
import { type DesiredState, desiredStateToKeys } from "../../core/index.js";
import { type AuditRecord, AuditRecordSchema } from "../../edgectl/audit/audit-record.js";
import { type CliSuite, exampleState, runCli, uniquePrefix } from "./cli-harness.js";

/** One test's routing prefix, its own audit prefix, and the environment naming both. */
export function auditScope(suite: CliSuite, tag: string, extra: Record<string, string> = {}) {
  const prefix = uniquePrefix(tag);
  const auditPrefix = `${prefix.slice(0, -1)}-audit/`;
  return {
    prefix,
    auditPrefix,
    env: suite.envFor(prefix, { AUDIT_PREFIX: auditPrefix, EDGECTL_USER: "tester", ...extra }),
  };
}

/** The intent keys (pool/, country/, continent/) under the prefix as rel → value. */
export async function intentOf(
  client: Etcd3,
  prefix: string,
  revision?: number,
): Promise<Record<string, string>> {
  const b = client.getAll().prefix(prefix);
  const all = await (revision === undefined ? b : b.revision(revision)).strings();
  return Object.fromEntries(
    Object.entries(all)
      .map(([k, v]) => [k.slice(prefix.length), v] as const)
      .filter(([k]) => /^(pool|country|continent)\//.test(k))
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
}

/** The intent a desired state stands for, as rel → canonical value. */
export function intentFor(state: DesiredState, prefix: string): Record<string, string> {
  return Object.fromEntries(
    [...desiredStateToKeys(state, prefix)].map(([k, v]) => [k.slice(prefix.length), v]),
  );
}

/** Every audit record under the prefix, oldest first, with the revision that wrote it. */
export async function recordsOf(
  client: Etcd3,
  auditPrefix: string,
): Promise<{ key: string; commitRevision: number; record: AuditRecord }[]> {
  const res = await client.getAll().prefix(auditPrefix).sort("Key", "Ascend").exec();
  return res.kvs.map((kv) => ({
    key: kv.key.toString("utf8"),
    commitRevision: Number(kv.mod_revision),
    record: AuditRecordSchema.parse(JSON.parse(kv.value.toString("utf8"))),
  }));
}

/** A distinct desired state per index: DE goes to its own pool `v-i`. */
export function variant(i: number): DesiredState {
  const base = exampleState();
  return {
    pools: { ...base.pools, [`v-${i}`]: { origin: `https://v-${i}.origin.example.com` } },
    countries: { ...base.countries, DE: { primary: `v-${i}`, fallbacks: ["fra-1"] } },
  };
}

/** Applies each state in turn (each must exit 0) with a reason naming its index. */
export async function applyAll(
  suite: CliSuite,
  env: Record<string, string>,
  states: readonly DesiredState[],
): Promise<void> {
  for (const [i, s] of states.entries()) {
    const r = await runCli(["apply", suite.files.write(s), "--yes", "--reason", `step ${i + 1}`], {
      env,
    });
    expect(r.code, r.stderr).toBe(0);
  }
}

/** Marks pools healthy (lease-less `health/` keys this test owns), so edge effects have routes. */
export async function markHealthy(client: Etcd3, prefix: string, pools: readonly string[]) {
  for (const p of pools) await client.put(`${prefix}health/${p}`).value('{"status":"healthy"}');
}
