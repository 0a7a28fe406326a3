/**
 * Decoded values kept across compiles, by key and `mod_revision`: within one etcd history a
 * key's value at a given `mod_revision` never changes, so a value decoded and validated once
 * need not be again. Each compile keeps only the keys it read, so the memo never outgrows the
 * prefix. The owner must `clear` it when the etcd history changes (revisions may repeat there).
 * Holds no bytes, only the decode results, which compiles share and never mutate.
 */
export class ValueMemo {
  private current = new Map<string, { readonly rev: number; readonly decoded: unknown }>();
  private next = new Map<string, { readonly rev: number; readonly decoded: unknown }>();

  /** The decoded value of `key` at `rev`: from the memo, else `decode()` (then remembered). */
  get<T>(key: string, rev: number | undefined, decode: () => T): T {
    if (rev === undefined) return decode();
    const hit = this.current.get(key);
    if (hit && hit.rev === rev) {
      this.next.set(key, hit);
      return hit.decoded as T;
    }
    const decoded = decode();
    this.next.set(key, { rev, decoded });
    return decoded;
  }

  /** Ends one compile's pass: keys it did not read are forgotten. */
  endPass(): void {
    this.current = this.next;
    this.next = new Map();
  }

  /** Forgets everything (a new etcd history). */
  clear(): void {
    this.current = new Map();
    this.next = new Map();
  }
}
