// What the route memo saves a compile: `tsx bench/experiments/compile-memo.ts [compiles]`. The
// bench's propagation fixture (20 pools, 252 country rules) in a RoutingIndex; each compile
// follows one change of `country/DE`, with a RouteMemo and without, 3 rounds each. Prints the p50
// (under tsx, whose keepNames makes both about 1.5× slower than the bundled pusher).
import { type CompiledMap, compileState, RouteMemo, RoutingIndex } from "../../core/index.js";
import { countryRule, scaleFixture } from "../lib/fixture.js";
import { summarize } from "../lib/stats.js";

const compiles = Number(process.argv[2] ?? 300);
const P = "/bench/";
const index = new RoutingIndex(P);
let rev = 0;
for (const e of scaleFixture({ keys: 0, pools: 20 }))
  index.upsert({ key: P + e.rel, value: e.value, modRevision: ++rev });
const opts = { prefix: P, floorPool: "p000", originTemplate: "https://{pool}.origin.example.com" };

function p50(memo: RouteMemo | undefined): number {
  let previous: CompiledMap | null = null;
  const times: number[] = [];
  for (let i = 0; i < compiles; i++) {
    index.upsert({ key: `${P}country/DE`, value: countryRule(i, 20), modRevision: ++rev });
    const t0 = performance.now();
    const now = new Date();
    previous = compileState(index.state(), rev, {
      ...opts,
      now,
      carried: previous,
      ...(memo ? { routeMemo: memo } : {}),
    }).map;
    times.push(performance.now() - t0);
  }
  return summarize(times).p50;
}

for (let round = 1; round <= 3; round++)
  console.log(
    `round ${round}: with the memo p50 ${p50(new RouteMemo()).toFixed(3)} ms, without ${p50(undefined).toFixed(3)} ms`,
  );
