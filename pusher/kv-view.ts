import { isAfter } from "../core/contract/map-order.js";
import { type CompiledMap, type CompileResult, routingText } from "../core/index.js";

/** How long a Workers KV read may lag behind a write (Cloudflare: up to about 60 s). */
export const KV_STALE_READ_MS = 60_000;

/**
 * What an anti-entropy read of `routes` says: KV agrees; KV holds a map older than one this
 * pusher learned less than a staleness window ago (`stale`: maybe a KV location that has not
 * caught up, maybe a former leader's late write); or KV really differs (`drift`).
 */
export type KvReadVerdict = "in-sync" | "stale" | "drift";

/**
 * The pusher's view of KV: the newest compile it wants there against what KV holds as far as it
 * knows (read on activation, then what it wrote). Answers what still has to be written:
 * `routes` when the newest compile routes differently from it (`sameRouting`: a new revision
 * alone, or a shed's `below_since`, is no reason), and `meta` whenever the revision it confirms
 * changes (docs/reference.md §3, §5).
 */
export class KvView {
  /** The newest compile, not necessarily written yet. */
  desired: CompileResult | null = null;
  /** What KV holds as far as this pusher knows. */
  written: CompiledMap | null = null;
  /** When `written` was learned (written by this pusher, or read), on the pusher's clock. */
  writtenAt = Number.NEGATIVE_INFINITY;
  /**
   * True after activation until the first compile made after activation's KV read arrives (that
   * compile carries the last valid rules the read brought): nothing is due before it.
   */
  awaitingCompile = false;
  private metaSignature: string | null = null;
  /** The last `sameRouting` answer, for the pair it was asked about. */
  private sameAs: {
    readonly desired: CompiledMap;
    readonly written: CompiledMap;
    readonly same: boolean;
  } | null = null;
  /** Signatures by map: each map's is computed once (it joins up to 1,000 problems). */
  private readonly signatures = new WeakMap<CompiledMap, string>();
  /** `routingText` by map: each map's text (~90 kB for 250 countries) is assembled once. */
  private readonly texts = new WeakMap<CompiledMap, string>();

  constructor(private readonly pusherId: string) {}

  /**
   * The desired map when KV's `routes` lacks it: KV has none, it belongs to another history, or
   * it routes differently; never one ordered before what KV holds.
   */
  routesDue(): CompiledMap | null {
    const d = this.desired?.map;
    if (!d || this.awaitingCompile) return null;
    const w = this.written;
    if (!w) return d;
    // The map this pusher just wrote: nothing to compare.
    if (w === d) return null;
    // KV never goes backwards in (history, rev): another leader may have written a newer map.
    if (isAfter(w, d)) return null;
    if (d.history !== w.history) return d;
    // Asked at most once per pair (hasPending and every tick ask again).
    if (this.sameAs?.desired !== d || this.sameAs.written !== w) {
      this.sameAs = { desired: d, written: w, same: this.text(d) === this.text(w) };
    }
    return this.sameAs.same ? null : d;
  }

  /**
   * The map `meta` describes: the one due in `routes`; else the newest compile when KV's
   * `routes` routes as it does (its revision is confirmed); else what KV holds (the newest
   * compile is older, or not made yet after activation). `null` when KV holds nothing known.
   */
  metaSource(): CompiledMap | null {
    const due = this.routesDue();
    if (due) return due;
    const d = this.desired?.map;
    const w = this.written;
    if (!w) return null;
    if (d && !this.awaitingCompile && !isAfter(w, d)) return d;
    return w;
  }

  /** Records what KV holds, learned at `at` (a write that completed, or a read). */
  learned(map: CompiledMap | null, at: number): void {
    this.written = map;
    this.writtenAt = at;
  }

  /**
   * Judges a read of `routes` (`inKv`; null when absent, `unparsable` when not a map) against the
   * newest compile. KV is eventually consistent: a read may return any value the key held in the
   * last `staleMs`, or "not found" for a key created within it. So a map ordered before the one
   * this pusher learned (wrote or read) less than `staleMs` ago, or no map at all, is `stale`:
   * not counted as drift. Once `staleMs` has passed, an older map is drift like any difference.
   */
  judgeRead(
    inKv: CompiledMap | null,
    unparsable: boolean,
    now: number,
    staleMs: number,
  ): KvReadVerdict {
    const desired = this.desired?.map;
    const known = this.written;
    const older = !unparsable && known !== null && (inKv === null || isAfter(known, inKv));
    if (older && now - this.writtenAt < staleMs) return "stale";
    if (!desired || !inKv || older) return "drift";
    return this.text(inKv) === this.text(desired) ? "in-sync" : "drift";
  }

  /** True when `meta` no longer describes the map it would describe now. */
  metaChanged(): boolean {
    const source = this.metaSource();
    return source !== null && this.signature(source) !== this.metaSignature;
  }

  /** Records that `meta` describing `map` is in KV. */
  metaWritten(map: CompiledMap): void {
    this.metaSignature = this.signature(map);
  }

  /** Forgets what `meta` holds, so the next tick rewrites it. */
  forgetMeta(): void {
    this.metaSignature = null;
  }

  private text(map: CompiledMap): string {
    let text = this.texts.get(map);
    if (text === undefined) {
      text = routingText(map);
      this.texts.set(map, text);
    }
    return text;
  }

  private signature(map: CompiledMap): string {
    let sig = this.signatures.get(map);
    if (sig === undefined) {
      sig = JSON.stringify([map.history, map.rev, map.epoch, map.problems, this.pusherId]);
      this.signatures.set(map, sig);
    }
    return sig;
  }
}
