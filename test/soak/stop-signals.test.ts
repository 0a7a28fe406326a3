import { afterEach, describe, expect, it } from "vitest";
import { onStopSignal } from "../../soak/stop-signals.js";

const releases: Array<() => void> = [];
afterEach(() => {
  for (const r of releases.splice(0)) r();
});

describe("onStopSignal", () => {
  it("stops on the first SIGINT, SIGTERM or SIGHUP only, however many arrive", () => {
    const seen: string[] = [];
    releases.push(onStopSignal((sig) => seen.push(sig)));
    process.emit("SIGTERM");
    process.emit("SIGINT");
    process.emit("SIGHUP");
    expect(seen).toEqual(["SIGTERM"]);
  });

  it("lets the signals go when released", () => {
    const before = process.listenerCount("SIGINT");
    const release = onStopSignal(() => {});
    expect(process.listenerCount("SIGINT")).toBe(before + 1);
    release();
    expect(process.listenerCount("SIGINT")).toBe(before);
  });
});
