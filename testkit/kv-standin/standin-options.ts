import type { AccountBudget } from "./account-budget.js";
import type { KvFault, KvFaultOptions } from "./faults.js";
import type { KvRequestLogEntry } from "./replies.js";
import type { StaleReadOptions } from "./versioned-values.js";

/** How the stand-in behaves: credentials, ids, faults, staleness, limits. */
export interface KvStandinOptions {
  readonly token?: string;
  /** More tokens of the same user (edgectl's, wrangler's): they share its one budget. */
  readonly tokens?: readonly string[];
  readonly accountId?: string;
  readonly namespaceId?: string;
  /** Seed for the fault and staleness RNGs (default 1). */
  readonly seed?: number;
  readonly faults?: KvFaultOptions;
  /** Eventually consistent reads (default off: every read sees the last write). */
  readonly staleReads?: StaleReadOptions;
  /** Same-key writes within 1 s: "429" (default), "unsuccessful-keys", or "off". */
  readonly perKeyWriteLimit?: "429" | "unsuccessful-keys" | "off";
  /** The user's budget, across all its tokens (default 1,200 per 5 minutes). */
  readonly accountLimit?: { readonly limit: number; readonly windowMs: number };
  /** Clock for the log, the per-key limit, the budget and staleness (default Date.now). */
  readonly now?: () => number;
  /** Put the request's Authorization header into error messages (a leaky upstream). */
  readonly echoAuthorizationInErrors?: boolean;
}

/** A running stand-in. */
export interface KvStandin {
  /** API base for `CF_API_BASE_URL`, e.g. `http://127.0.0.1:PORT/client/v4`. */
  readonly url: string;
  readonly token: string;
  readonly accountId: string;
  readonly namespaceId: string;
  readonly seed: number;
  /** Stored values of the namespace: the truth, whatever a stale read answers. */
  readonly values: Map<string, string>;
  readonly requests: KvRequestLogEntry[];
  /** The user's request budget, shared by every token. */
  readonly budget: AccountBudget;
  /** The staleness in force (undefined: consistent reads). */
  readonly staleReads: StaleReadOptions | undefined;
  setFaults(f: KvFaultOptions | undefined): void;
  /** Forces the next `count` requests to fail with `kind` (before random faults). */
  failNext(kind: KvFault, count?: number): void;
  close(): Promise<void>;
}
