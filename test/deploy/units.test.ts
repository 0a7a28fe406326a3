import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const DEPLOY = resolve(import.meta.dirname, "../../deploy");

/** `Key=value` lines of a unit's [Service] section (the last one wins, as in systemd). */
function service(unit: string): Map<string, string> {
  const text = readFileSync(resolve(DEPLOY, unit), "utf8");
  const section = text.slice(text.indexOf("[Service]"), text.indexOf("[Install]"));
  const out = new Map<string, string>();
  for (const line of section.split("\n")) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m?.[1]) out.set(m[1], m[2] ?? "");
  }
  return out;
}

const mib = (v: string | undefined) => Number(/^(\d+)M$/.exec(v ?? "")?.[1] ?? Number.NaN);

describe("the long-running units look after themselves", () => {
  it.each([
    ["edge-pusher.service", 30],
    ["edge-heartbeat@.service", 10],
    ["edge-observer.service", 30],
  ])(
    "%s: Type=notify from any process, a watchdog, bounded memory, no credential wrapper",
    (unit, watchdog) => {
      const s = service(unit);
      expect(s.get("Type")).toBe("notify");
      // the notifications come from a systemd-notify child (adapters/systemd-notify.ts)
      expect(s.get("NotifyAccess")).toBe("all");
      expect(Number(s.get("WatchdogSec"))).toBe(watchdog);
      expect(mib(s.get("MemoryHigh"))).toBeLessThan(mib(s.get("MemoryMax")));
      expect(s.get("Restart")).toBe("always");
      // the process reads $CREDENTIALS_DIRECTORY itself: no wrapper turns credentials into variables
      expect(s.get("ExecStart")).not.toContain("with-credentials");
    },
  );
});
