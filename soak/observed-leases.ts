/** One lease an observer process registered for its `observed/` keys (from its log). */
export interface ObserverLease {
  /** As the observer logs it (etcdctl's hex). */
  readonly hex: string;
  /** Which start of the observer (0 for the first process). */
  readonly generation: number;
  /** When it was registered, ms. */
  readonly from: number;
  /** When it stopped being the live one (its process killed, or a new lease registered), ms. */
  until: number | null;
}

/** One `observed/` key as etcd holds it. */
export interface ObservedKey {
  readonly key: string;
  /** etcd's lease id, decimal as etcd3 gives it; "0" for none. */
  readonly lease: string;
}

/**
 * Why each of `keys` does not carry the observer's lease, in words; empty when all do. A key
 * must be on the live lease, or on one the observer let go less than `graceMs` ago (a killed
 * observer's keys stay until its lease runs out: its TTL, and etcd's time to expire it).
 */
export function keysOffLease(
  keys: readonly ObservedKey[],
  leases: readonly ObserverLease[],
  now: number,
  graceMs: number,
): string[] {
  const byId = new Map(leases.map((l) => [BigInt(`0x${l.hex}`).toString(10), l]));
  const out: string[] = [];
  for (const k of keys) {
    if (k.lease === "0") {
      out.push(`${k.key} has no lease`);
      continue;
    }
    const l = byId.get(k.lease);
    const hex = BigInt(k.lease).toString(16);
    if (!l) out.push(`${k.key} is on lease ${hex}, which no observer registered`);
    else if (l.until !== null && now - l.until > graceMs)
      out.push(
        `${k.key} is on lease ${hex}, let go ${((now - l.until) / 1000).toFixed(0)} s ago (grace ${graceMs / 1000} s)`,
      );
  }
  return out;
}
