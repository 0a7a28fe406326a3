import type { EnvVarDoc } from "../../adapters/env-var-doc.js";
import {
  DEFAULT_HEARTBEAT_SECONDS,
  DEFAULT_PUSHER_LISTEN,
} from "../../adapters/pusher-defaults.js";
import { DEFAULT_AUDIT_KEEP, DEFAULT_AUDIT_PREFIX } from "../audit/audit-record.js";

/** `EDGECTL_LOCK_TTL`'s default: the `lock/apply` lease's TTL in seconds. */
export const DEFAULT_LOCK_TTL_SECONDS = 30;

/** `EDGECTL_MAX_TXN_OPS`'s default: etcd's own `--max-txn-ops` default. */
export const DEFAULT_MAX_TXN_OPS = 128;

/** `EDGECTL_ETCD_TIMEOUT_MS`'s default. */
export const DEFAULT_ETCD_TIMEOUT_MS = 5000;

/**
 * The variables edgectl reads besides the pusher's etcd, routing and KV ones (docs/reference.md
 * §6; `npm run docs:env` writes its table from these).
 */
export const EDGECTL_ENV: readonly EnvVarDoc[] = [
  {
    name: "EDGECTL_LOCK_TTL",
    default: String(DEFAULT_LOCK_TTL_SECONDS),
    meaning: "TTL in seconds of the `lock/apply` lease (§2), kept alive while an apply holds it",
  },
  {
    name: "EDGECTL_ETCD_TIMEOUT_MS",
    default: String(DEFAULT_ETCD_TIMEOUT_MS),
    meaning: "deadline of one etcd request to one member",
    details:
      "a call moves between members for twice this before it exits 4 (etcd unavailable, nothing written)",
  },
  {
    name: "EDGECTL_MAX_TXN_OPS",
    default: String(DEFAULT_MAX_TXN_OPS),
    meaning: "operations one transaction may hold: etcd's `--max-txn-ops`",
    details:
      "`apply`, `move` and `rollback` refuse a change set that, with its 3 extra operations, is larger",
  },
  {
    name: "AUDIT_PREFIX",
    default: DEFAULT_AUDIT_PREFIX,
    meaning:
      "where `apply`, `move` and `rollback` keep audit records (§2); must not overlap `ROUTING_PREFIX`",
  },
  {
    name: "EDGECTL_AUDIT_KEEP",
    default: String(DEFAULT_AUDIT_KEEP),
    meaning: "audit records kept; the commit prunes older ones",
  },
  {
    name: "EDGECTL_USER",
    default: "the OS user@host",
    meaning: "who the audit record names",
  },
  {
    name: "EDGE_URL",
    default: "unset",
    meaning: "`observe`: the edge's URL; `--edge` wins",
  },
  {
    name: "OBSERVE_TOKEN",
    default: "unset",
    meaning: "`observe`: the edge's observations token (the Worker secret); `--token-file` wins",
  },
  {
    name: "PURGE_TOKEN",
    default: "unset",
    meaning: "`purge`: the edge's purge token (the Worker secret); `--token-file` wins",
  },
  {
    name: "PUSHER_LISTEN",
    default: DEFAULT_PUSHER_LISTEN,
    meaning: "`status`: where the pusher's `/status` is; `--pusher` wins",
  },
  {
    name: "HEARTBEAT_SECONDS",
    default: String(DEFAULT_HEARTBEAT_SECONDS),
    meaning: "`status`: the pusher's heartbeat; KV `meta` older than twice this is behind",
  },
  {
    name: "LOG_LEVEL",
    default: "info",
    meaning: "`heartbeat`, `observe`: pino level",
  },
  {
    name: "NO_COLOR, TERM",
    default: "unset",
    meaning: "colours only on a terminal, never with `NO_COLOR` set or `TERM=dumb`",
  },
];
