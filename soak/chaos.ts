import type { Lease } from "etcd3";
import type { SoakClock } from "./clock.js";
import { ELECTION_TTL, HEARTBEAT_TTL } from "./layout.js";
import type { KillEvent } from "./oracle.js";
import type { MemberStarts } from "./sampler.js";
import type { ChaosStep } from "./schedule.js";
import type { World } from "./world.js";

/** The heartbeats killed in turn, one a minute: the others run the whole time and are judged. */
const HEARTBEAT_VICTIMS = ["p02", "p03", "p04", "p05", "p06", "p18/a"];

/** What the chaos steps act on and record into. */
export interface Chaos {
  readonly world: World;
  readonly clock: SoakClock;
  /** Each kill, for the lease check (`leasesBackAfterKills`). */
  readonly kills: KillEvent[];
  /** Leases kept by `--plant-leak lease`. */
  readonly planted: Lease[];
  /** When each etcd member last started (the sampler's ages). */
  readonly memberStarts: MemberStarts;
  /** Records and logs an event. */
  note(what: string): void;
}

/** Runs one step of the chaos schedule; `n` counts the heartbeat kills so far. */
export async function runChaosStep(c: Chaos, step: ChaosStep, n: number): Promise<void> {
  const { world, clock, kills, note } = c;
  if (step.kind === "kill-heartbeat") {
    const name = HEARTBEAT_VICTIMS[n % HEARTBEAT_VICTIMS.length];
    const hb = world.heartbeats.find((h) => h.name === name);
    if (!hb) return;
    await world.restartHeartbeat(hb);
    kills.push({ t: clock.now(), what: `heartbeat ${name}`, ttl: HEARTBEAT_TTL });
    note(`killed heartbeat ${name} (SIGKILL) and started it again`);
  } else if (step.kind === "kill-leader-pusher") {
    const live = world.pushers.filter((p) => p.process.proc.alive());
    const roles = await Promise.all(live.map((p) => p.process.status()));
    const leader = live.find((_, i) => roles[i]?.role === "leader");
    if (!leader) {
      note("no leader pusher to kill");
      return;
    }
    await leader.process.proc.kill9();
    kills.push({ t: clock.now(), what: `pusher ${leader.id}`, ttl: ELECTION_TTL });
    const next = await world.startPusher();
    note(`killed leader pusher ${leader.id} (SIGKILL); started ${next.id} as standby`);
  } else if (step.kind === "kill-etcd-member") {
    await world.cluster.kill(2);
    kills.push({ t: clock.now(), what: "etcd member m2", ttl: HEARTBEAT_TTL });
    note("killed etcd member m2 (SIGKILL)");
  } else if (step.kind === "restart-etcd-member") {
    await world.cluster.restart(2);
    c.memberStarts[2] = Date.now();
    note("started etcd member m2 again");
  } else {
    const lease = world.client.lease(60, { autoKeepAlive: true });
    await lease.grant();
    c.planted.push(lease);
    note(`planted leak: lease ${c.planted.length} kept`);
  }
}
