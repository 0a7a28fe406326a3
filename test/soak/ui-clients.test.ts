import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../pusher/clock.js";
import { PusherStatus } from "../../pusher/status.js";
import { RoutingView } from "../../pusher/ui/routing-view.js";
import { UiEventStream } from "../../pusher/ui/ui-event-stream.js";
import { startUiClients } from "../../soak/ui-clients.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(handler: (res: ServerResponse) => void): Promise<string> {
  const server = createServer((_req, res) => handler(res));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("the soak's /ui tabs", () => {
  it("hold one stream, reload the other, count their events and close every stream", async () => {
    const stream = new UiEventStream({
      status: new PusherStatus("ui-tabs-test", systemClock),
      routing: new RoutingView("par-1"),
      pingMs: 100,
    });
    const base = await serve((res) => stream.attach(res));
    const ui = startUiClients(base, 300);
    await sleep(1_100);
    expect(stream.size).toBe(2);
    await ui.stop();
    expect(ui.held).toMatchObject({ opened: 1, failed: 0, maps: 1, endedEarly: null });
    expect(ui.held.statuses).toBeGreaterThanOrEqual(1);
    expect(ui.held.pings).toBeGreaterThanOrEqual(5);
    expect(ui.held.maxGapMs).toBeLessThan(1_000);
    expect(ui.reloaded.opened).toBeGreaterThanOrEqual(3);
    expect(ui.reloaded.maps).toBe(ui.reloaded.opened);
    expect(ui.reloaded.endedEarly).toBeNull();
    await sleep(100);
    expect(stream.size).toBe(0);
  });

  it("records streams the server ends and opens it refuses", async () => {
    const ending = await serve((res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end("event: ping\ndata: 1\n\n");
    });
    const ended = startUiClients(ending, 100);
    await sleep(450);
    await ended.stop();
    expect(ended.held).toMatchObject({
      opened: 1,
      pings: 1,
      endedEarly: "the pusher ended the stream",
    });
    expect(ended.reloaded.endedEarly).toBe("the pusher ended the stream");

    const refusing = await serve((res) => {
      res.writeHead(503);
      res.end();
    });
    const refused = startUiClients(refusing, 100);
    await sleep(450);
    await refused.stop();
    expect(refused.held).toMatchObject({ opened: 0, failed: 1, endedEarly: "answered 503" });
    expect(refused.reloaded.failed).toBeGreaterThanOrEqual(3);
    expect(refused.reloaded.opened).toBe(0);
  });
});
