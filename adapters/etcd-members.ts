import { ExponentialBackoff, handleWhen, noop, retry } from "cockatiel";
import { Etcd3 } from "etcd3";
import { isMemberFailure } from "./etcd-fault-handling.js";
import { type EtcdSettings, etcdClientOptions } from "./etcd-options.js";
import { EtcdUnavailableError } from "./etcd-unavailable-error.js";

/** What opening the members takes: the connection, and the deadline of one unary call in ms. */
export interface EtcdMembersSettings {
  readonly etcd: EtcdSettings;
  readonly etcdTimeoutMs: number;
}

/** Options of one call through {@link EtcdMembers.any}. */
export interface MemberCallOptions {
  /** How long the call keeps moving between members (default: the members' budget). */
  readonly budgetMs?: number;
}

/** The gRPC call options of one attempt on one member (pass them to the etcd3 builder). */
export interface AttemptOptions {
  /** When this attempt gives up on its member (ms since the epoch). */
  readonly deadline: number;
}

/** How long idempotent calls wait for one member, and for the cluster. */
export interface MemberTimeouts {
  /** One attempt on one member. */
  readonly attemptMs: number;
  /** How long a call keeps moving between members before etcd counts as unavailable. */
  readonly budgetMs: number;
}

/**
 * The timeouts for a request deadline of `etcdTimeoutMs`: an idempotent attempt gets at most 2 s
 * on one member (a healthy member answers in milliseconds; a proposal forwarded to a leader that
 * just died is never answered, so waiting longer only delays the next member), and a call keeps
 * moving for twice the request deadline, enough for a leader election.
 */
export function memberTimeouts(etcdTimeoutMs: number): MemberTimeouts {
  return { attemptMs: Math.min(etcdTimeoutMs, 2000), budgetMs: 2 * etcdTimeoutMs };
}

/**
 * Every etcd member of the endpoint list, one etcd3 client each, so that edgectl decides which
 * member serves a call. etcd3 (with retries off, as edgectl needs them for the commit) would
 * send every call to one randomly picked member and never move on; here idempotent calls move to
 * the next member when one fails ({@link any}), and the one call that must not be re-sent goes
 * to the member that answered last ({@link once}).
 */
export class EtcdMembers {
  /** Index of the member that answered last: calls start there. */
  private preferred = 0;

  constructor(
    readonly endpoints: readonly string[],
    private readonly clients: readonly Etcd3[],
    private readonly timeouts: MemberTimeouts,
  ) {
    if (clients.length === 0 || clients.length !== endpoints.length)
      throw new RangeError("EtcdMembers needs one client per endpoint");
  }

  /**
   * One client per endpoint, each with a deadline of `etcdTimeoutMs` on every unary call (the
   * commit's); idempotent calls set their own, shorter ones. Streams stay open.
   */
  static open(settings: EtcdMembersSettings): EtcdMembers {
    const timeout = settings.etcdTimeoutMs;
    const base = etcdClientOptions(settings.etcd);
    const clients = settings.etcd.endpoints.map(
      (endpoint) =>
        new Etcd3({
          ...base,
          hosts: [endpoint],
          dialTimeout: timeout,
          defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeout }),
          // No automatic re-sends and no circuit breaker: which member to try, and whether a
          // call may be sent again, is decided here (a re-sent commit that landed is a conflict).
          faultHandling: { host: () => noop, global: noop },
        }),
    );
    return new EtcdMembers(settings.etcd.endpoints, clients, memberTimeouts(timeout));
  }

  /** The endpoint of the member that answered last (where the next call goes first). */
  get current(): string {
    return this.endpoints[this.preferred] ?? "";
  }

  private client(i: number): Etcd3 {
    const c = this.clients[i];
    if (!c) throw new RangeError(`no etcd member ${i}`);
    return c;
  }

  /**
   * Runs an idempotent call (a read, a lease grant or keepalive, a create-only transaction whose
   * result is re-read) on the member that answered last, with `call`'s deadline for that member
   * (pass it to the etcd3 builder's `.options()`); on a member failure it moves to the
   * next member, round after round with a growing pause, until one answers or the budget is
   * spent with every member tried. Then it throws {@link EtcdUnavailableError}. Errors that are
   * etcd's answer (permission denied, lease not found…) are thrown at once.
   */
  async any<T>(
    operation: string,
    fn: (client: Etcd3, call: AttemptOptions) => Promise<T>,
    opts: MemberCallOptions = {},
  ): Promise<T> {
    const n = this.clients.length;
    const start = this.preferred;
    const deadline = Date.now() + (opts.budgetMs ?? this.timeouts.budgetMs);
    const failures = new Map<string, unknown>();
    const giveUp = new AbortController();
    const policy = retry(handleWhen(isMemberFailure), {
      maxAttempts: Number.MAX_SAFE_INTEGER,
      backoff: new ExponentialBackoff({ initialDelay: 20, maxDelay: 500 }),
    });
    try {
      return await policy.execute(async ({ attempt }) => {
        const i = (start + attempt) % n;
        try {
          const out = await fn(this.client(i), {
            deadline: Date.now() + this.timeouts.attemptMs,
          });
          this.preferred = i;
          return out;
        } catch (e) {
          if (isMemberFailure(e)) {
            failures.set(this.endpoints[i] ?? String(i), e);
            if (attempt + 1 >= n && Date.now() >= deadline) giveUp.abort();
          }
          throw e;
        }
      }, giveUp.signal);
    } catch (e) {
      if (isMemberFailure(e)) throw new EtcdUnavailableError(operation, failures);
      throw e;
    }
  }

  /**
   * Runs a call that must never be sent twice (the apply commit) once, on the member that
   * answered last (it was alive a moment ago). A failure is the caller's to settle.
   */
  once<T>(fn: (client: Etcd3) => Promise<T>): Promise<T> {
    return fn(this.client(this.preferred));
  }

  /** Closes every member's client. */
  close(): void {
    for (const c of this.clients) c.close();
  }
}

/** Runs `fn` with the members of the settings' endpoint list and always closes them. */
export async function withEtcdMembers<T>(
  settings: EtcdMembersSettings,
  fn: (members: EtcdMembers) => Promise<T>,
): Promise<T> {
  const members = EtcdMembers.open(settings);
  try {
    return await fn(members);
  } finally {
    members.close();
  }
}
