import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { systemClock } from "../../../pusher/clock.js";
import { startStatusServer } from "../../../pusher/http-server.js";
import { createMetrics } from "../../../pusher/metrics.js";
import { PusherStatus } from "../../../pusher/status.js";
import type { UiData, UiMap } from "../../../pusher/ui/ui-document.js";
import { freePort } from "../../../testkit/ports.js";
import { getWithHost } from "../../helpers/host-request.js";
import { seedRouting, uniqueNames, useEtcd, waitFor } from "../harness.js";
import { startUiPusher } from "./ui-harness.js";

const ctx = useEtcd();
const BIN = resolve(import.meta.dirname, "../../../bin/edge-pusher.js");

async function serving() {
  const { prefix, electionKey } = uniqueNames();
  await seedRouting(ctx.client, prefix);
  const ui = await startUiPusher({ endpoint: ctx.etcd.endpoint, prefix, electionKey });
  ctx.cleanups.push(() => ui.stop());
  const data = async () => (await (await fetch(`${ui.base}/ui/data`)).json()) as UiData;
  await waitFor("first compile", async () => (await data()).map);
  return { ui, prefix, data };
}

/** Reads server-sent events from `/ui/events` until `until` accepts one (or the time runs out). */
async function readEvents(
  url: string,
  until: (event: string, data: string) => boolean,
  timeoutMs = 10_000,
): Promise<{ event: string; data: string }[]> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const seen: { event: string; data: string }[] = [];
  try {
    const res = await fetch(url, { signal: abort.signal });
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const reader = res.body?.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf("\n\n");
        const event = /^event: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (event === undefined || data === undefined) continue;
        seen.push({ event, data });
        if (until(event, data)) return seen;
      }
    }
  } catch (e) {
    if (!abort.signal.aborted) throw e;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return seen;
}

describe("/ui over HTTP", () => {
  it("serves the page, its files and its data with strict headers, and nothing else under /ui", async () => {
    const { ui } = await serving();
    for (const [path, type] of [
      ["/ui", "text/html; charset=utf-8"],
      ["/ui/app.js", "text/javascript; charset=utf-8"],
      ["/ui/app.css", "text/css; charset=utf-8"],
      ["/ui/panels.css", "text/css; charset=utf-8"],
      ["/ui/favicon.svg", "image/svg+xml"],
      ["/ui/data", "application/json"],
      ["/ui/nope", "application/json"],
    ] as const) {
      const res = await fetch(`${ui.base}${path}`);
      expect(res.status, path).toBe(path === "/ui/nope" ? 404 : 200);
      expect(res.headers.get("content-type"), path).toBe(type);
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp, path).toContain("default-src 'self'");
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).not.toContain("unsafe");
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(res.headers.get("x-frame-options"), path).toBe("DENY");
      expect(res.headers.get("access-control-allow-origin"), path).toBeNull();
      await res.arrayBuffer();
    }
    const html = await (await fetch(`${ui.base}/ui`)).text();
    // No inline script runs (CSP would block it anyway) and nothing is loaded from elsewhere.
    expect(html).not.toMatch(/<script(?![^>]*(src="\/ui\/app\.js"|type="application\/json"))/);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).toContain('id="c-DE"');
    const head = await fetch(`${ui.base}/ui`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    expect((await fetch(`${ui.base}/ui/data`, { method: "POST" })).status).toBe(405);
    // The rest of the listener is unchanged.
    expect((await fetch(`${ui.base}/status`)).status).toBe(200);
    expect((await fetch(`${ui.base}/nope`)).status).toBe(404);
  });

  it("/ui/data carries the compiled routes and pool health, and no origin", async () => {
    const { ui, prefix, data } = await serving();
    await ctx.client.put(`${prefix}health/fra-1`).value('{"status":"draining"}');
    await ctx.client.delete().key(`${prefix}health/par-1`);
    const d = await waitFor("both health changes seen", async () => {
      const x = await data();
      const health = (name: string) => x.map?.pools.find((p) => p.name === name)?.health;
      return health("fra-1") === "draining" && health("par-1") === "missing" ? x : null;
    });
    const map = d.map as UiMap;
    expect(map.default).toEqual({
      pool: "ams-1",
      chain: ["ams-1"],
      source: "country/_default",
      degraded: null,
    });
    expect(map.countries.DE).toEqual({
      pool: "ams-1",
      chain: ["ams-1"],
      source: "country/DE",
      degraded: null,
    });
    expect(map.pools.map((p) => [p.name, p.health, p.defined])).toEqual([
      ["ams-1", "healthy", true],
      ["fra-1", "draining", true],
      ["par-1", "missing", true],
    ]);
    expect(map.floor_pool).toBe("par-1");
    expect(d.status.role).toBe("leader");
    expect(d.status.etcd_revision).toBeGreaterThanOrEqual(map.rev);
    // seedRouting's origins are https://{pool}.example.net: none may appear, here or in the stream.
    const text = JSON.stringify(d);
    expect(text).not.toContain("example.net");
    expect(text).not.toContain("https://");
    const events = await readEvents(`${ui.base}/ui/events`, (e) => e === "status");
    expect(events.map((e) => e.event)).toEqual(["map", "status"]);
    expect(events.map((e) => e.data).join("\n")).not.toContain("example.net");
  });

  it("/ui/events sends the current state at once, then a map event for each compile", async () => {
    const { ui, prefix, data } = await serving();
    const before = (await data()).map?.rev ?? 0;
    let put = false;
    const events = await readEvents(`${ui.base}/ui/events`, (event, text) => {
      if (event === "status" && !put) {
        put = true;
        void ctx.client
          .put(`${prefix}country/BR`)
          .value(JSON.stringify({ primary: "fra-1", fallbacks: [] }))
          .exec();
      }
      const map = event === "map" ? (JSON.parse(text) as UiMap | null) : null;
      return map !== null && map.rev > before;
    });
    const maps = events.filter((e) => e.event === "map").map((e) => JSON.parse(e.data) as UiMap);
    expect(maps[0]?.rev).toBe(before);
    const last = maps.at(-1);
    expect(last?.rev).toBeGreaterThan(before);
    expect(last?.countries.BR).toMatchObject({ pool: "fra-1", source: "country/BR" });
  });

  it("is 404 on a listener started without the /ui handler", async () => {
    const status = new PusherStatus("no-ui", systemClock);
    const server = await startStatusServer({
      host: "127.0.0.1",
      port: 0,
      status,
      metrics: createMetrics(status),
    });
    ctx.cleanups.push(() => server.close());
    expect((await fetch(`http://127.0.0.1:${server.port}/ui`)).status).toBe(404);
  });

  it("the edge-pusher binary serves /ui on PUSHER_LISTEN, to its own Host names only", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), "edge-ui-bin-"));
    const child = spawn(process.execPath, [BIN], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        ETCD_ENDPOINTS: ctx.etcd.endpoint,
        ROUTING_PREFIX: prefix,
        PUSHER_ELECTION_KEY: electionKey,
        PUSHER_LISTEN: `127.0.0.1:${port}`,
        PUSHER_ALLOWED_HOSTS: "edge-pusher.test",
        KV_SINK: "local",
        KV_LOCAL_PERSIST: join(dir, "kv"),
        KV_NAMESPACE_ID: "ui-bin-test",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
    ctx.cleanups.push(async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    });
    const base = `http://127.0.0.1:${port}`;
    const map = await waitFor(
      "the pusher's /ui/data",
      async () => ((await (await fetch(`${base}/ui/data`)).json()) as UiData).map,
      45_000,
      200,
    ).catch((e: unknown) => {
      throw new Error(`${String(e)}\n${err}`);
    });
    expect(map.countries.DE?.pool).toBe("fra-1");
    const page = await fetch(`${base}/ui`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script defer src="/ui/app.js"></script>');
    // Only its own names (and PUSHER_ALLOWED_HOSTS): a DNS-rebinding page's Host is refused.
    expect((await getWithHost(port, "/ui/data", `edge-pusher.test:${port}`)).status).toBe(200);
    expect((await getWithHost(port, "/ui/data", `localhost:${port}`)).status).toBe(200);
    expect((await getWithHost(port, "/ui/data", `rebind.evil.example:${port}`)).status).toBe(421);
    // Its /metrics counts the open /ui/events streams, and one closed goes from the count.
    const streams = async () =>
      Number(
        /^edge_pusher_ui_streams (\d+)$/m.exec(await (await fetch(`${base}/metrics`)).text())?.[1],
      );
    expect(await streams()).toBe(0);
    const tabs = [new AbortController(), new AbortController()];
    for (const tab of tabs) {
      const res = await fetch(`${base}/ui/events`, { signal: tab.signal });
      expect(res.status).toBe(200);
    }
    expect(await streams()).toBe(2);
    tabs[0]?.abort();
    await waitFor(
      "a closed stream to go from the count",
      async () => ((await streams()) === 1 ? true : null),
      10_000,
      50,
    );
    tabs[1]?.abort();
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
