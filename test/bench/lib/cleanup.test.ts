import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { Cleanup } from "../../../bench/lib/cleanup.js";

describe("Cleanup", () => {
  it("runs every step once, newest first, past a failing one", async () => {
    const cleanup = new Cleanup();
    const ran: string[] = [];
    cleanup.add("a", () => {
      ran.push("a");
    });
    cleanup.add("b", () => {
      throw new Error("b failed");
    });
    cleanup.add("c", () => {
      ran.push("c");
    });
    await cleanup.runAll();
    await cleanup.runAll();
    expect(ran).toEqual(["c", "a"]);
  });

  it("makes a second caller wait until the run under way has stopped everything", async () => {
    const cleanup = new Cleanup();
    const stopped: string[] = [];
    for (const name of ["etcd", "heartbeat", "pusher"])
      cleanup.add(name, async () => {
        await sleep(30);
        stopped.push(name);
      });
    const bySignal = cleanup.runAll();
    await sleep(5);
    // The program's own finally, while the signal's cleanup is stopping the first step.
    await cleanup.runAll();
    expect(stopped).toEqual(["pusher", "heartbeat", "etcd"]);
    await bySignal;
  });
});
