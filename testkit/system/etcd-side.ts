import { type EtcdServer, startEtcd } from "../etcd.js";
import { type EtcdCluster, startEtcdCluster } from "../etcd-cluster.js";
import type { Owner } from "./owner.js";

/** What every etcd of the system offers: where its clients go. */
export interface EtcdSide {
  /** `ETCD_ENDPOINTS`: one URL, or every member's joined by commas. */
  readonly endpoint: string;
}

/** One etcd on free loopback ports with a temporary data dir (testkit/etcd.ts). */
export interface SingleEtcd extends EtcdSide {
  readonly server: EtcdServer;
}

/** A 3-member cluster (testkit/etcd-cluster.ts). */
export interface ClusterEtcd extends EtcdSide {
  readonly cluster: EtcdCluster;
}

/** The system's etcd as one server. */
export function singleEtcd(): (owner: Owner) => Promise<SingleEtcd> {
  return async (owner) => {
    const server = await startEtcd();
    owner.add(`etcd ${server.clientPort}`, () => server.stop());
    return { endpoint: server.endpoint, server };
  };
}

/** The system's etcd as a cluster of `size` members (default 3). */
export function etcdCluster(size?: number): (owner: Owner) => Promise<ClusterEtcd> {
  return async (owner) => {
    const cluster = await startEtcdCluster(size === undefined ? {} : { size });
    owner.add("etcd cluster", () => cluster.stop());
    return { endpoint: cluster.endpoints.join(","), cluster };
  };
}
