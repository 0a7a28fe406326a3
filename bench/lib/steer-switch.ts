import { launchBrowser, type TestBrowser } from "../../testkit/browser.js";
import { SEGMENT_SECONDS } from "../../testkit/steer-media.js";
import {
  type FetchedManifest,
  isSegment,
  playerState,
  recordManifests,
  reportedOn,
  STEER_PLAYERS,
  type SteerPlayer,
  until,
} from "../../testkit/steer-players.js";
import { STEER_COUNTRY, startSteerStack } from "../../testkit/steer-stack.js";
import type { Cleanup } from "./cleanup.js";

/** One player's figures. */
export interface PlayerSwitch {
  /** From its pool's origin dying to the first segment of its stream from the next pool, ms. */
  readonly switch_ms: number;
  /** Changes of pathway (reported, offered first, or segments elsewhere) while nothing changed. */
  readonly steady_flaps: number;
  /** Steering reloads during the steady phase. */
  readonly steady_reloads: number;
}

/** What {@link steerSwitch} measures, per player. */
export interface SteerSwitchResult {
  readonly ttl_s: number;
  readonly segment_s: number;
  /** How long nothing changed before the pool died, s. */
  readonly steady_s: number;
  readonly hls: PlayerSwitch;
  readonly dash: PlayerSwitch;
}

const DEBUG = "bench-steer-debug-token";

/**
 * hls.js and dash.js in Chromium, side by side as viewers of a fenced country, under the real
 * control plane (etcd, the pusher, `edgectl heartbeat`, the Worker in workerd): `steadyS` with
 * nothing changing (every pathway change counts as a flap), then their pool's origin is killed
 * and each player's time to its first segment from the next pool is taken.
 */
export async function steerSwitch(o: {
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
  readonly ttlS: number;
  readonly steadyS: number;
}): Promise<SteerSwitchResult> {
  const stack = await startSteerStack({
    ttlS: o.ttlS,
    debugToken: DEBUG,
    mediaSeconds: o.steadyS + 120,
  });
  o.cleanup.add("steering stack", () => stack.stop());
  await stack.routedTo("fra-1", 60_000);
  const players = [];
  for (const p of STEER_PLAYERS) {
    const browser: TestBrowser = await launchBrowser();
    o.cleanup.add(`${p.name} browser`, () => browser.close());
    await browser.context.setExtraHTTPHeaders({
      "X-Edge-Debug-Token": DEBUG,
      "X-Edge-Debug-Country": STEER_COUNTRY,
      "X-Edge-Debug-Viewer": `bench-${p.format}`,
    });
    const manifests: FetchedManifest[] = recordManifests(browser, p.format);
    await browser.page.goto(new URL(p.page, stack.edgeUrl).href);
    players.push({ ...p, browser, manifests });
  }
  const segmentsOf = (pool: string, format: SteerPlayer["format"], since: number) =>
    stack.origin(pool).hits.filter((h) => h.at >= since && isSegment(h.url, format));
  for (const p of players)
    await until(`${p.name} playing from fra-1`, async () =>
      (await playerState(p.browser)).playing && segmentsOf("fra-1", p.format, 0).length >= 2
        ? true
        : undefined,
    );

  o.log(`  steering: ${o.steadyS} s with nothing changing`);
  const from = Date.now();
  await new Promise((r) => setTimeout(r, o.steadyS * 1000));
  const steady = new Map<string, { flaps: number; reloads: number }>();
  for (const p of players) {
    const seen = p.manifests.filter((m) => m.at >= from);
    const firsts = seen.map((m) => (JSON.parse(m.body)["PATHWAY-PRIORITY"] as string[])[0]);
    const reports = seen.map((m) => reportedOn(m.url, p.report));
    const changes = (xs: readonly (string | undefined)[]) =>
      xs.filter((x, i) => i > 0 && x !== xs[i - 1]).length;
    const elsewhere = ["ams-1", "par-1", "use-1"].filter(
      (pool) => segmentsOf(pool, p.format, from).length > 0,
    ).length;
    steady.set(p.format, {
      flaps: changes(firsts) + changes(reports) + elsewhere + (firsts[0] === "fra-1" ? 0 : 1),
      reloads: seen.length,
    });
  }

  const t0 = Date.now();
  await stack.origin("fra-1").kill();
  const switched = new Map<string, number>();
  await Promise.all(
    players.map(async (p) => {
      const first = await until(
        `${p.name}: a segment from ams-1`,
        () => segmentsOf("ams-1", p.format, t0)[0],
        (2 * o.ttlS + 30) * 1000,
      );
      switched.set(p.format, first.at - t0);
    }),
  );
  const of = (format: "hls" | "dash"): PlayerSwitch => ({
    switch_ms: switched.get(format) ?? Number.NaN,
    steady_flaps: steady.get(format)?.flaps ?? Number.NaN,
    steady_reloads: steady.get(format)?.reloads ?? 0,
  });
  const result = {
    ttl_s: o.ttlS,
    segment_s: SEGMENT_SECONDS,
    steady_s: o.steadyS,
    hls: of("hls"),
    dash: of("dash"),
  };
  o.log(
    `  steering: switch hls.js ${result.hls.switch_ms} ms, dash.js ${result.dash.switch_ms} ms (goal ≤ ${(o.ttlS + SEGMENT_SECONDS) * 1000} ms); flaps over ${o.steadyS} s: ${result.hls.steady_flaps} / ${result.dash.steady_flaps}`,
  );
  return result;
}
