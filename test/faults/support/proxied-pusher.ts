import { expectedMap, waitConverged } from "../../../testkit/map-oracle.js";
import { startTcpProxy } from "../../../testkit/tcp-proxy.js";
import type { FaultContext } from "../scenario.js";
import { names, scenarioEtcd, seedWorld, testClient } from "./etcd-world.js";
import { startRecordedKv } from "./kv-recorder.js";
import { startScenarioPusher } from "./pusher-process.js";

/**
 * A seeded world and a real pusher that reaches etcd only through a TCP proxy the scenario can
 * cut; resolves once the pusher has pushed the seed state.
 */
export async function startProxiedPusher(ctx: FaultContext, tag: string) {
  const etcd = await scenarioEtcd(ctx);
  const client = testClient(ctx, etcd.endpoint);
  const proxy = await startTcpProxy(etcd.clientPort);
  ctx.defer(() => proxy.close());
  const { prefix, electionKey } = names(tag);
  await seedWorld(client, prefix, 10);
  const kv = await startRecordedKv(ctx);
  const pusher = await startScenarioPusher(ctx, {
    id: `${tag}-1`,
    etcdEndpoint: proxy.endpoint,
    prefix,
    electionKey,
    electionTtl: 15,
    kvEnv: kv.env(),
  });
  await pusher.ready();
  if (
    (await waitConverged(() => kv.routes(), await expectedMap(client, prefix), 30_000)) === null
  ) {
    throw new Error("the pusher never pushed the seed state");
  }
  return { etcd, client, proxy, prefix, kv, pusher };
}
