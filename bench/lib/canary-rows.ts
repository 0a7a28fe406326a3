import { DEFAULT_CANARY_GATES } from "../../core/index.js";
import type { CanaryResult } from "../sections/canary.js";
import { check, type Row } from "./row.js";

const GATES = `default gates (errors ≤ +${DEFAULT_CANARY_GATES.errors_pt} pt, p90 ≤ ×${DEFAULT_CANARY_GATES.p90_factor} + ${DEFAULT_CANARY_GATES.p90_plus_ms} ms)`;

/** The table's `canary.*` rows (docs/reference.md §13): a bad canary's rollback and blast radius. */
export function canaryRows(r: CanaryResult | null): Row[] {
  if (!r) return [];
  return [
    [
      "canary.rollback_ms (move BR --canary to a 4 s shard → its judge's rollback in etcd)",
      `${r.rollback_ms} ms`,
      `edge routes back at ${r.edge_rollback_ms} ms; ${GATES}, --min-samples ${r.min_samples}, ${r.requests_per_s} requests/s`,
      "",
      `≤ ${r.goal_ms / 1000} s`,
      check(r.rollback_ms <= r.goal_ms),
    ],
    [
      "canary.blast_share (BR viewers that reached the slow shard)",
      `${r.blast_share} %`,
      `${r.viewers_hurt} of ${r.viewers_seen} viewers`,
      "",
      `≤ ${r.blast_goal} %`,
      check(r.blast_share <= r.blast_goal),
    ],
    ["canary.share", `${r.share} %`, "", "", "", ""],
  ];
}
