/**
 * The oldest etcd release of each supported minor line that production accepts
 * (docs/operating.md, "etcd versions"): older releases let RBAC be bypassed (a nested
 * transaction, PrevKv or a lease inside a transaction, or a from-key watch).
 */
export const ETCD_PRODUCTION_FLOOR: readonly string[] = ["3.5.33", "3.6.14", "3.7.1"];

/** Whether production accepts an etcd version, and why not when it does not. */
export type EtcdVersionVerdict =
  | { readonly accepted: true }
  | { readonly accepted: false; readonly why: string };

const parse = (v: string): number[] | null => {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(v.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
};

/**
 * Production's verdict on `version` (`3.7.3`, `v3.5.16`): at or above its minor line's floor
 * ({@link ETCD_PRODUCTION_FLOOR}); a minor line newer than the newest floor is accepted, an
 * older one (3.4 and before) is not.
 */
export function etcdProductionVerdict(version: string): EtcdVersionVerdict {
  const v = parse(version);
  const needs = `needs ${ETCD_PRODUCTION_FLOOR.map((f) => `${f}+`).join(", ")}`;
  if (!v) return { accepted: false, why: `"${version}" is not a version; ${needs}` };
  const [major = 0, minor = 0, patch = 0] = v;
  const floors = ETCD_PRODUCTION_FLOOR.map((f) => parse(f) ?? [0, 0, 0]);
  const line = floors.find(([a, b]) => a === major && b === minor);
  if (line) {
    return patch >= (line[2] ?? 0)
      ? { accepted: true }
      : { accepted: false, why: `below ${line.join(".")}, which fixes RBAC bypasses; ${needs}` };
  }
  const newest = floors[floors.length - 1] ?? [0, 0, 0];
  const newer = major > (newest[0] ?? 0) || (major === newest[0] && minor > (newest[1] ?? 0));
  return newer
    ? { accepted: true }
    : {
        accepted: false,
        why: `${major}.${minor} is out of support and has RBAC bypasses; ${needs}`,
      };
}
