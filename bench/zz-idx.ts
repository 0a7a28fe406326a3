import { growthFixture } from "./lib/fixture.js";
import { RoutingIndex, compileState } from "../core/index.js";
const P = "/edge/routing/v1/";
for (const n of [10_000, 100_000]) {
  const fx = growthFixture(n);
  const idx = new RoutingIndex(P);
  let t = performance.now();
  idx.reset(fx.map((e, i) => ({ key: P + e.rel, value: Buffer.from(e.value), modRevision: i + 1 })));
  console.log(n, "reset", (performance.now() - t).toFixed(1));
  let prev = null as any;
  for (let k = 0; k < 8; k++) {
    t = performance.now();
    idx.upsert({ key: P + "country/DE", value: Buffer.from(JSON.stringify({ primary: "p00001", fallbacks: [] })), modRevision: n + 10 + k });
    const t1 = performance.now();
    const st = idx.state();
    const t2 = performance.now();
    const r = compileState(st, n + 10 + k, { prefix: P, floorPool: "p00001", originTemplate: "https://{pool}.x", now: new Date(), previous: prev });
    prev = r.map;
    const t3 = performance.now();
    console.log(n, `upsert ${(t1 - t).toFixed(2)} state ${(t2 - t1).toFixed(1)} compile ${(t3 - t2).toFixed(1)}`);
  }
}
