import type { Scenario } from "../scenario.js";
import { etcdKillLoop } from "./s01-etcd-kill-loop.js";
import { reconnectCatchup } from "./s02-reconnect-catchup.js";
import { compactionWhileDisconnected } from "./s03-compaction.js";
import { kvFaults } from "./s04-kv-faults.js";
import { badInput } from "./s05-bad-input.js";
import { leadership } from "./s06-leadership.js";
import { workerHostile } from "./s07-worker-hostile.js";
import { concurrentOperators } from "./s08-concurrent-operators.js";
import { etcdAuth } from "./s09-etcd-auth.js";
import { secretsGrep } from "./s10-secrets.js";
import { clusterKills } from "./s11-cluster-kills.js";
import { clusterPartition } from "./s12-cluster-partition.js";
import { quorumLoss } from "./s13-quorum-loss.js";
import { snapshotRestore } from "./s14-snapshot-restore.js";
import { boostExpiry } from "./s15-boost-expiry.js";
import { kvSlowReads } from "./s16-kv-slow-reads.js";
import { hugePrefix } from "./s17-huge-prefix.js";
import { checkerPartition } from "./s18-checker-partition.js";
import { latencyStorm } from "./s19-latency-storm.js";
import { residencyUnderFire } from "./s20-residency-under-fire.js";
import { cacheFaults } from "./s21-cache-faults.js";
import { viewersObserverFaults } from "./s22-viewers-observer-faults.js";
import { canaryUnderKills } from "./s23-canary-under-kills.js";
import { steeringStorm } from "./s24-steering-storm.js";

/** Every scenario, in the order they run (the secrets grep last: it reads everything). */
export const scenarios: readonly Scenario[] = [
  etcdKillLoop,
  reconnectCatchup,
  compactionWhileDisconnected,
  kvFaults,
  badInput,
  leadership,
  workerHostile,
  concurrentOperators,
  etcdAuth,
  clusterKills,
  clusterPartition,
  quorumLoss,
  snapshotRestore,
  boostExpiry,
  kvSlowReads,
  hugePrefix,
  checkerPartition,
  latencyStorm,
  residencyUnderFire,
  cacheFaults,
  viewersObserverFaults,
  canaryUnderKills,
  steeringStorm,
  secretsGrep,
];
