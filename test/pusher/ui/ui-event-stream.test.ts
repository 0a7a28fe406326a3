import { createServer, get, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { compile } from "../../../core/index.js";
import { systemClock } from "../../../pusher/clock.js";
import { PusherStatus } from "../../../pusher/status.js";
import { RoutingView } from "../../../pusher/ui/routing-view.js";
import { MAX_UI_STREAM_CLIENTS, UiEventStream } from "../../../pusher/ui/ui-event-stream.js";
import { opts, snap, world } from "../../helpers/snapshot.js";
import { waitFor } from "../harness.js";

/** One `/ui/events` client: every event it received, in order. */
interface Client {
  readonly res: IncomingMessage;
  readonly events: { event: string; data: string }[];
  /** Resolves to the whole body once the server ends the response. */
  readonly ended: Promise<string>;
  close(): void;
}

const servers: Server[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A loopback server whose every request is handed to a stream over `status` and `routing`. */
async function serve(statusCheckMs = 250) {
  const status = new PusherStatus("ui-stream-test", systemClock);
  const routing = new RoutingView("par-1");
  const stream = new UiEventStream({ status, routing, statusCheckMs });
  const server = createServer((_req, res) => stream.attach(res));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ui/events`;
  const open = () =>
    new Promise<Client>((resolve, reject) => {
      const req = get(url, { agent: false }, (res) => {
        const events: { event: string; data: string }[] = [];
        let buffer = "";
        let raw = "";
        res.setEncoding("utf8");
        const ended = new Promise<string>((r) => res.once("end", () => r(raw)));
        res.on("data", (chunk: string) => {
          raw += chunk;
          buffer += chunk;
          for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(frame)?.[1];
            const data = /^data: (.*)$/m.exec(frame)?.[1];
            if (event !== undefined && data !== undefined) events.push({ event, data });
          }
        });
        const client = { res, events, ended, close: () => req.destroy() };
        clients.push(client);
        resolve(client);
      });
      req.on("error", reject);
    });
  return { status, routing, stream, open, url };
}

const statusEvents = (c: Client) =>
  c.events.filter((e) => e.event === "status").map((e) => JSON.parse(e.data) as { role: string });

describe("/ui/events with several clients", () => {
  it("sends each open page a status change even when another page connected after the change", async () => {
    // A long check interval: the second page attaches well before the first check runs.
    const { status, open } = await serve(600);
    const a = await open();
    await waitFor("a's first status", () => statusEvents(a).length === 1);
    status.role = "leader";
    const b = await open();
    await waitFor("b's first status", () => statusEvents(b).length === 1);
    expect(statusEvents(b)[0]?.role).toBe("leader");
    const seen = await waitFor(
      "the change on the first page",
      () => statusEvents(a).find((s) => s.role === "leader"),
      3_000,
    ).catch(() => null);
    expect(seen, "the page open before the change never heard of it").not.toBeNull();
    // Nothing changed for b: it is not sent the same document again.
    await sleep(700);
    expect(statusEvents(b)).toHaveLength(1);
    expect(statusEvents(a)).toHaveLength(2);
  });

  it("sends every client each compile's map", async () => {
    const { routing, open } = await serve();
    const pages = [await open(), await open(), await open()];
    routing.update(compile(snap(world(), 42), opts()));
    for (const [i, page] of pages.entries()) {
      const map = await waitFor(`page ${i}'s map`, () =>
        page.events.find((e) => e.event === "map" && e.data !== "null"),
      );
      expect((JSON.parse(map.data) as { rev: number }).rev).toBe(42);
    }
  });

  it(`holds at most ${MAX_UI_STREAM_CLIENTS} streams: one more gets 503 with a reason, and a freed place is taken again`, async () => {
    const { open, stream } = await serve();
    const held: Client[] = [];
    for (let i = 0; i < MAX_UI_STREAM_CLIENTS; i += 1) held.push(await open());
    expect(held.every((c) => c.res.statusCode === 200)).toBe(true);
    await waitFor("all attached", () => stream.size === MAX_UI_STREAM_CLIENTS);
    const extra = await open();
    expect(extra.res.statusCode).toBe(503);
    expect(extra.res.headers["retry-after"]).toBe("5");
    expect(extra.res.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(await extra.ended)).toEqual({
      error: `too many /ui/events streams open (at most ${MAX_UI_STREAM_CLIENTS})`,
      reason: "ui-stream-limit",
    });
    expect(stream.size).toBe(MAX_UI_STREAM_CLIENTS);
    held[0]?.close();
    await waitFor("a place freed", () => stream.size === MAX_UI_STREAM_CLIENTS - 1);
    const again = await open();
    expect(again.res.statusCode).toBe(200);
    await waitFor("its first state", () => again.events.some((e) => e.event === "status"));
  });
});
