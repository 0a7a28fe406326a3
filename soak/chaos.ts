import type { Lease } from "etcd3";
import type { SoakClock } from "./clock.js";
import { ELECTION_TTL, HEARTBEAT_TTL, OBSERVER_TTL } from "./layout.js";
import type { KillEvent } from "./oracle.js";
import type { MemberStarts } from "./sampler.js";
import type { ChaosStep } from "./schedule.js";
import type { Viewers } from "./viewer-figures.js";
import type { World } from "./world.js";

/** The heartbeats killed in turn, one a minute: the others run the whole time and are judged. */
const HEARTBEAT_VICTIMS = ["p02", "p03", "p04", "p05", "p06", "p18/a"];

/** Countries no client of the soak is from: `--plant-leak observed` leaves their keys. */
const PLANTED_COUNTRIES = ["AR", "CL", "CO", "PE", "UY", "EC", "BO", "PY", "VE", "CR"];
/** `observed/` keys left by each `plant-observed` step. */
export const PLANTED_KEYS_PER_STEP = 20;

/** What the chaos steps act on and record into. */
export interface Chaos {
  readonly world: World;
  readonly clock: SoakClock;
  /** Each kill, for the lease check (`leasesBackAfterKills`). */
  readonly kills: KillEvent[];
  /** Leases kept by `--plant-leak lease`. */
  readonly planted: Lease[];
  /** The observer and what viewers' checks found. */
  readonly viewers: Viewers;
  /** `observed/` keys left by `--plant-leak observed` so far. */
  plantedKeys: number;
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
  } else if (step.kind === "kill-observer") {
    await c.viewers.observer.restart();
    kills.push({ t: clock.now(), what: "edgectl observe", ttl: OBSERVER_TTL });
    note("killed edgectl observe (SIGKILL) and started it again on its --state file");
  } else if (step.kind === "plant-observed") {
    const live = c.viewers.observer.leases().find((l) => l.until === null);
    if (!live) {
      note("planted leak: the observer holds no lease yet; nothing left");
      return;
    }
    const lease = BigInt(`0x${live.hex}`).toString(10);
    const value = JSON.stringify({ p90_ms: 120, samples: 60, error_ratio: 0 });
    for (let i = 0; i < PLANTED_KEYS_PER_STEP; i++) {
      const n = c.plantedKeys++;
      const cc = PLANTED_COUNTRIES[n % PLANTED_COUNTRIES.length];
      // a pool name no rule uses, never twice: the keys only add up
      const pool = `leak-${Math.floor(n / PLANTED_COUNTRIES.length)}`;
      await world.client
        .put(`${world.prefix}observed/${cc}/${pool}`)
        .value(value)
        .lease(lease)
        .exec();
    }
    note(`planted leak: ${c.plantedKeys} observed/ keys left on the observer's lease ${live.hex}`);
  } else {
    const lease = world.client.lease(60, { autoKeepAlive: true });
    await lease.grant();
    c.planted.push(lease);
    note(`planted leak: lease ${c.planted.length} kept`);
  }
}
