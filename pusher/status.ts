import { isBrokenCircuitError } from "cockatiel";
import {
  boundProblemLines,
  type CanaryReport,
  type PoolReport,
  safeText,
  type ViewerShedReport,
} from "../core/index.js";
import type { Clock } from "./clock.js";

/** Whether this pusher writes (`leader`) or waits (`standby`). */
export type PusherRole = "leader" | "standby";

/** The `/status` document. */
export interface StatusDocument {
  readonly role: PusherRole;
  readonly pusher: string;
  /** Whether the leader's lease was renewed recently enough to write. */
  readonly lease_ok: boolean;
  /** The etcd history compiled in (`CompiledMap.history`): raised by each restore or replacement. */
  readonly history: number;
  readonly etcd_revision: number | null;
  readonly pushed_revision: number | null;
  /** `rev` of the `routes` KV holds as far as this pusher knows: where routing last changed. */
  readonly routes_revision: number | null;
  readonly lag_revisions: number | null;
  readonly lag_seconds: number;
  readonly epoch: number | null;
  readonly countries: number | null;
  readonly problems: readonly string[];
  readonly etcd_reachable: boolean;
  readonly kv_ok: boolean;
  readonly last_push_at: string | null;
  readonly last_error: { readonly at: string; readonly message: string } | null;
  /** Each pool's checkers, p90 and shed share, as the last compile saw them (docs/reference.md §9). */
  readonly pools: readonly PoolReport[];
  /** Each country's shed of a pool by its own viewers, from the last compile (docs/reference.md §12). */
  readonly viewer_sheds: readonly ViewerShedReport[];
  /** The running canary: share, state (judging or frozen) and its gates' figures (§13); null: none. */
  readonly canary: CanaryReport | null;
}

/** Readiness verdict for `/readyz` (and `/healthz`). */
export interface HealthVerdict {
  readonly ok: boolean;
  readonly reasons: readonly string[];
}

/**
 * The pusher's observable state, shared by the loop, `/status`, `/readyz` and `/metrics`.
 * Every message stored here is scrubbed of the configured secrets.
 */
export class PusherStatus {
  role: PusherRole = "standby";
  leaseOk = false;
  /** The etcd history of `etcdRevision`; `pushedHistory` is that of `pushedRevision`. */
  history = 0;
  pushedHistory = 0;
  /** Newest revision known to hold a routing change (read header or watch event). */
  etcdRevision: number | null = null;
  pushedRevision: number | null = null;
  /** `rev` of KV's `routes` as last written or read by this pusher. */
  routesRevision: number | null = null;
  epoch: number | null = null;
  countries: number | null = null;
  private problemLines: readonly string[] = [];
  private poolsSource: () => readonly PoolReport[] = () => [];
  private viewerShedsSource: () => readonly ViewerShedReport[] = () => [];
  private canarySource: (nowMs: number) => CanaryReport | null = () => null;
  lastPushAt: number | null = null;
  private etcdDownSince: number | null = null;
  private kvFailingSince: number | null = null;
  private behindSince: number | null = null;
  private lastError: { at: number; message: string } | null = null;
  /** The last etcd failure of this outage that was etcd's own, not the circuit breaker's. */
  private etcdCause: string | null = null;

  constructor(
    readonly pusherId: string,
    private readonly clock: Clock,
    private readonly secrets: readonly string[] = [],
    /** How long etcd may be unreachable, KV failing or the leader behind before `/readyz` fails. */
    readonly unhealthyAfterMs = 30_000,
  ) {}

  /** Each pool's checkers, p90 and shed share, from the last compile (see {@link showPools}). */
  get pools(): readonly PoolReport[] {
    return this.poolsSource();
  }

  /**
   * Where {@link pools} comes from: a function of the last compile, called only when `/status`
   * asks. At 50,000 pools the list costs ~100 ms of CPU and ~5 MiB, which no compile should pay
   * on the way to KV.
   */
  showPools(source: () => readonly PoolReport[]): void {
    this.poolsSource = source;
  }

  /** Where `/status`'s `viewer_sheds` comes from: a function of the last compile, as {@link showPools}. */
  showViewerSheds(source: () => readonly ViewerShedReport[]): void {
    this.viewerShedsSource = source;
  }

  /** Where `/status`'s `canary` comes from: the last compile's, reported at the time asked. */
  showCanary(source: (nowMs: number) => CanaryReport | null): void {
    this.canarySource = source;
  }

  /** The running canary now, as the last compile saw it. */
  canary(): CanaryReport | null {
    return this.canarySource(this.clock.now());
  }

  /** The problems `/status` lists: bounded in count and length, control characters escaped. */
  get problems(): readonly string[] {
    return this.problemLines;
  }

  set problems(lines: readonly string[]) {
    this.problemLines = boundProblemLines(lines);
  }

  /** Records that etcd holds routing state at `revision`. */
  observeRevision(revision: number): void {
    if (this.etcdRevision === null || revision > this.etcdRevision) this.etcdRevision = revision;
    this.updateBehind();
  }

  /** A new etcd history starts at `revision`: the old one's revisions no longer compare. */
  newHistory(history: number, revision: number): void {
    this.history = history;
    this.etcdRevision = revision;
    this.updateBehind();
  }

  /**
   * Records a successful push of the map at `revision` (in `history`), with KV's `routes` at
   * `routesRevision`.
   */
  pushed(
    revision: number,
    epoch: number,
    countries: number,
    problems: readonly string[],
    history = this.history,
    routesRevision: number | null = revision,
  ): void {
    this.pushedRevision = revision;
    this.routesRevision = routesRevision;
    this.pushedHistory = history;
    this.epoch = epoch;
    this.countries = countries;
    this.problems = problems;
    this.lastPushAt = this.clock.now();
    this.updateBehind();
  }

  etcdOk(): void {
    this.etcdDownSince = null;
    this.etcdCause = null;
  }

  /**
   * Records an etcd failure. After repeated failures the client's circuit breaker refuses calls
   * without trying (`Execution prevented because the circuit breaker is open`); that says nothing
   * on-call can act on, so `last_error` keeps naming the failure that opened it.
   */
  etcdFailed(error: unknown): void {
    this.etcdDownSince ??= this.clock.now();
    if (!isBrokenCircuitError(error)) {
      this.etcdCause = errorText(error);
      this.recordError("etcd", error);
    } else if (this.etcdCause !== null) {
      this.recordError("etcd", `${this.etcdCause} (calls held back by the circuit breaker)`);
    } else {
      this.recordError("etcd", error);
    }
  }

  kvOk(): void {
    this.kvFailingSince = null;
  }

  kvFailed(error: unknown): void {
    this.kvFailingSince ??= this.clock.now();
    this.recordError("kv", error);
  }

  recordError(source: string, error: unknown): void {
    const text = errorText(error);
    // Scrubbed before it is cut, so a cut can never leave part of a secret behind.
    this.lastError = {
      at: this.clock.now(),
      message: safeText(this.scrub(`${source}: ${text}`)),
    };
  }

  /** Seconds since the oldest change not yet in KV (0 when caught up or standby). */
  lagSeconds(): number {
    if (this.role !== "leader" || this.behindSince === null) return 0;
    return Math.max(0, (this.clock.now() - this.behindSince) / 1000);
  }

  lagRevisions(): number | null {
    if (this.etcdRevision === null || this.pushedRevision === null) return null;
    if (this.pushedHistory !== this.history) return null;
    return Math.max(0, this.etcdRevision - this.pushedRevision);
  }

  health(): HealthVerdict {
    const now = this.clock.now();
    const limit = this.unhealthyAfterMs;
    const reasons: string[] = [];
    if (this.etcdDownSince !== null && now - this.etcdDownSince > limit) {
      reasons.push("etcd unreachable");
    }
    if (this.role === "leader") {
      if (this.kvFailingSince !== null && now - this.kvFailingSince > limit) {
        reasons.push("kv writes failing");
      }
      if (this.lagSeconds() * 1000 > limit) reasons.push("behind etcd");
    }
    return { ok: reasons.length === 0, reasons };
  }

  document(): StatusDocument {
    return {
      role: this.role,
      pusher: this.pusherId,
      lease_ok: this.role === "leader" && this.leaseOk,
      history: this.history,
      etcd_revision: this.etcdRevision,
      pushed_revision: this.pushedRevision,
      routes_revision: this.routesRevision,
      lag_revisions: this.lagRevisions(),
      lag_seconds: this.lagSeconds(),
      epoch: this.epoch,
      countries: this.countries,
      problems: this.problems,
      etcd_reachable: this.etcdDownSince === null,
      kv_ok: this.kvFailingSince === null,
      last_push_at: this.lastPushAt === null ? null : new Date(this.lastPushAt).toISOString(),
      last_error: this.lastError
        ? { at: new Date(this.lastError.at).toISOString(), message: this.lastError.message }
        : null,
      pools: this.pools,
      viewer_sheds: this.viewerShedsSource(),
      canary: this.canary(),
    };
  }

  /** Removes any configured secret from a message. */
  scrub(text: string): string {
    let out = text;
    for (const s of this.secrets) if (s.length >= 4) out = out.split(s).join("[redacted]");
    return out;
  }

  private updateBehind(): void {
    const behind =
      this.etcdRevision !== null &&
      (this.pushedRevision === null ||
        this.pushedHistory < this.history ||
        (this.pushedHistory === this.history && this.pushedRevision < this.etcdRevision));
    if (!behind) this.behindSince = null;
    else this.behindSince ??= this.clock.now();
  }
}

/** An error as one line: its name and message, or the text itself. */
function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
