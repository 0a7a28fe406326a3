import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TTFB_BUCKETS_MS } from "../../core/contract/ttfb-buckets.js";
import { TopShape } from "../../edgectl/output/shapes/top-shape.js";
import { freePort } from "../../testkit/ports.js";
import { runCli, uniquePrefix, useCliSuite } from "./cli-harness.js";

const TOKEN = "top-token-8d2e41";
const suite = useCliSuite();

/**
 * A minute row as docs/reference.md §12 shows the edge's answer with `by=minute`: its TTFB
 * histogram holds half the answered requests at `ttfb_ms.p50`, two fifths at `p90`, the rest at
 * `p99` (each a bucket bound, so the merged quantiles read them back).
 */
function row(
  country: string,
  pool: string,
  o: Partial<Record<string, number>>,
  extra: { ttfb_ms?: { p50: number | null; p90: number | null; p99: number | null } } & Record<
    string,
    unknown
  > = {},
) {
  const outcomes = {
    ok: 0,
    client_error: 0,
    origin_error: 0,
    timeout: 0,
    unreachable: 0,
    edge_error: 0,
    ...o,
  };
  const ttfb = extra.ttfb_ms ?? { p50: 40, p90: 100, p99: 200 };
  const answered = outcomes.ok + outcomes.client_error + outcomes.origin_error;
  const counts = new Array<number>(TTFB_BUCKETS_MS.length + 1).fill(0);
  let sum = 0;
  for (let i = 0; i < answered && ttfb.p50 !== null; i++) {
    const ms =
      (i < Math.ceil(answered * 0.5)
        ? ttfb.p50
        : i < Math.ceil(answered * 0.9)
          ? ttfb.p90
          : ttfb.p99) ?? 0;
    const b = TTFB_BUCKETS_MS.indexOf(ms);
    counts[b] = (counts[b] ?? 0) + 1;
    sum += ms;
  }
  return {
    country,
    pool,
    minute: "2026-12-06T10:41:00.000Z",
    requests: Object.values(outcomes).reduce((a, b) => a + b, 0),
    outcomes,
    failovers: 0,
    ttfb_ms: ttfb,
    ttfb_counts: counts,
    ttfb_sum_ms: sum,
    starved: 0,
    cmcd_requests: 0,
    throughput_kbps_p50: null,
    ...extra,
  };
}

/** A loopback edge answering `GET /__edge/observations` with whatever the test sets. */
let answer: { status: number; body: string } = { status: 200, body: "{}" };
const seen: { window: string | null; authorization: string | undefined }[] = [];
let server: Server;
let edgeUrl: string;

function document(windowS: number, rows: unknown[]) {
  // 120 s covered: the window of 60 s rounds out to two whole minutes.
  return JSON.stringify({
    window_s: windowS,
    since: "2026-12-06T10:40:00.000Z",
    until: "2026-12-06T10:42:00.000Z",
    rows,
  });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://edge");
    seen.push({ window: url.searchParams.get("window"), authorization: req.headers.authorization });
    if (url.pathname !== "/__edge/observations") return res.writeHead(404).end();
    if (req.headers.authorization !== `Bearer ${TOKEN}`)
      return res.writeHead(401, { "www-authenticate": "Bearer" }).end();
    res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  edgeUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function withCheckers(prefix: string) {
  // Two checkers of us-east (median 300 ms) and one of eu-west; sa-east publishes no p90.
  await suite.client.put(`${prefix}health/us-east/a`).value('{"status":"healthy","p90_ms":280}');
  await suite.client.put(`${prefix}health/us-east/b`).value('{"status":"healthy","p90_ms":320}');
  await suite.client.put(`${prefix}health/eu-west`).value('{"status":"healthy","p90_ms":45}');
  await suite.client.put(`${prefix}health/sa-east`).value('{"status":"healthy"}');
}

describe("edgectl top", () => {
  it("gives each country and pool's rates, ratios and p90 beside its checkers' p90 (-o json)", async () => {
    const prefix = uniquePrefix("top");
    await withCheckers(prefix);
    answer = {
      status: 200,
      body: document(60, [
        row(
          "BR",
          "us-east",
          { ok: 1180, client_error: 8, origin_error: 12 },
          {
            ttfb_ms: { p50: 4000, p90: 5000, p99: 5000 },
            starved: 41,
            cmcd_requests: 1100,
          },
        ),
        row("BR", "sa-east", { ok: 240 }),
        row("DE", "eu-west", { ok: 2400 }),
        row("AR", "us-east", { ok: 60 }, { ttfb_ms: { p50: null, p90: null, p99: null } }),
      ]),
    };
    const env = suite.envFor(prefix, { OBSERVE_TOKEN: TOKEN });
    const r = await runCli(["top", "BR", "ar", "--edge", edgeUrl, "-o", "json"], { env });
    expect(r.code, r.stderr).toBe(0);
    const out = TopShape.parse(JSON.parse(r.stdout));
    expect(out).toEqual({
      window_s: 60,
      rows: [
        {
          country: "AR",
          pool: "us-east",
          requests_per_s: 0.5,
          error_ratio: 0,
          ttfb_ms: { p50: null, p90: null },
          starved_ratio: null,
          checkers_p90_ms: 300,
        },
        {
          country: "BR",
          pool: "sa-east",
          requests_per_s: 2,
          error_ratio: 0,
          ttfb_ms: { p50: 40, p90: 100 },
          starved_ratio: null,
          checkers_p90_ms: null,
        },
        {
          country: "BR",
          pool: "us-east",
          requests_per_s: 10,
          error_ratio: 0.01,
          ttfb_ms: { p50: 4000, p90: 5000 },
          starved_ratio: 0.0373,
          checkers_p90_ms: 300,
        },
      ],
    });
    expect(seen.at(-1)).toEqual({ window: "60", authorization: `Bearer ${TOKEN}` });
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });

  it("prints a table, asks for --window, and reads EDGE_URL", async () => {
    const prefix = uniquePrefix("top-text");
    await withCheckers(prefix);
    answer = { status: 200, body: document(300, [row("DE", "eu-west", { ok: 2400 })]) };
    const env = suite.envFor(prefix, { OBSERVE_TOKEN: TOKEN, EDGE_URL: edgeUrl });
    const r = await runCli(["top", "--window", "300"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(seen.at(-1)?.window).toBe("300");
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("window 300 s");
    expect(lines[1]).toMatch(
      /^COUNTRY\s+POOL\s+REQ\/S\s+ERRORS\s+P50\s+P90\s+STARVED\s+CHECKERS P90$/,
    );
    expect(lines[2]).toMatch(/^DE\s+eu-west\s+20\s+0\.0%\s+40 ms\s+100 ms\s+-\s+45 ms$/);

    answer = { status: 200, body: document(60, [row("DE", "eu-west", { ok: 10 })]) };
    const none = await runCli(["top", "BR"], { env });
    expect(none.code).toBe(0);
    expect(none.stdout.trim()).toBe("no requests from BR in the last 60 s");
  });

  it("names each failure of the edge with its reason and exit 1, never the token", async () => {
    const prefix = uniquePrefix("top-fail");
    const env = suite.envFor(prefix, { OBSERVE_TOKEN: TOKEN });
    const fail = async (edge: string, environment = env) => {
      const r = await runCli(["top", "--edge", edge, "-o", "json"], { env: environment });
      expect(r.stdout + r.stderr).not.toContain(TOKEN);
      expect(r.stdout + r.stderr).not.toContain("wrong-token-7");
      return {
        code: r.code,
        error: JSON.parse(r.stdout).error as { code: string; message: string },
      };
    };

    const closed = await freePort();
    const unreachable = await fail(`http://127.0.0.1:${closed}`);
    expect(unreachable.code).toBe(1);
    expect(unreachable.error.code).toBe("unreachable");
    expect(unreachable.error.message).toContain(`127.0.0.1:${closed}`);

    const wrong = await fail(edgeUrl, { ...env, OBSERVE_TOKEN: "wrong-token-7" });
    expect(wrong).toMatchObject({ code: 1, error: { code: "unauthorized" } });
    expect(wrong.error.message).toContain("OBSERVE_TOKEN");

    answer = { status: 200, body: "<html>\u001b[31mnot json" };
    const junk = await fail(edgeUrl);
    expect(junk).toMatchObject({ code: 1, error: { code: "junk-response" } });
    expect(junk.error.message).not.toContain("\u001b");

    answer = { status: 200, body: JSON.stringify({ window_s: 60, rows: [{ country: "BR" }] }) };
    expect(await fail(edgeUrl)).toMatchObject({ code: 1, error: { code: "junk-response" } });

    answer = { status: 200, body: document(120, []) };
    const otherWindow = await fail(edgeUrl);
    expect(otherWindow.error).toMatchObject({ code: "junk-response" });
    expect(otherWindow.error.message).toContain("120");

    answer = { status: 503, body: '{"error":"aggregator-unavailable"}' };
    expect(await fail(edgeUrl)).toMatchObject({ code: 1, error: { code: "edge-status" } });
  });

  it("refuses a bad country, window, URL or a missing token before asking anyone", async () => {
    const env = suite.envFor(uniquePrefix("top-usage"), { OBSERVE_TOKEN: TOKEN });
    const before = seen.length;
    const usage = async (argv: string[], environment = env) => {
      const r = await runCli(["top", ...argv, "-o", "json"], { env: environment });
      expect(r.code).toBe(1);
      return JSON.parse(r.stdout).error as { code: string; message: string };
    };
    expect((await usage(["ZZ", "--edge", edgeUrl])).message).toContain('"ZZ"');
    expect((await usage(["--edge", edgeUrl, "--window", "901"])).message).toContain("--window");
    expect((await usage(["--edge", edgeUrl, "--window", "1.5"])).code).toBe("usage");
    expect((await usage(["--edge", "ftp://edge"])).message).toContain("--edge");
    expect((await usage([])).message).toContain("EDGE_URL");
    const { OBSERVE_TOKEN: _, ...noToken } = env;
    expect((await usage(["--edge", edgeUrl], noToken)).message).toContain("OBSERVE_TOKEN");
    expect(seen.length).toBe(before);
  });
});
