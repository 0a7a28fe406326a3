import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { PrefixedOutput } from "../../scripts/stack/output.js";
import { Supervisor } from "../../scripts/stack/supervisor.js";

describe("the local stack's Supervisor as the system launcher's owner", () => {
  it("stops its children first, then the in-process parts newest first, even when one throws", async () => {
    const out = new PassThrough();
    const lines: string[] = [];
    out.on("data", (d: Buffer) => lines.push(d.toString()));
    const sup = new Supervisor(new PrefixedOutput(out, false), () => {});
    const order: string[] = [];
    const child = sup.spawn({
      name: "sleeper",
      command: process.execPath,
      args: ["-e", "setInterval(() => {}, 1000)"],
      env: { PATH: process.env.PATH ?? "" },
      cwd: process.cwd(),
    });
    void child.exited.then(() => order.push("child"));
    sup.add("etcd", () => {
      order.push(`etcd (child alive: ${child.alive()})`);
    });
    sup.add("origins", () => {
      order.push("origins");
      throw new Error("already closed");
    });
    sup.add("worker", async () => {
      order.push("worker");
    });
    await sup.stopAll(3_000);
    expect(order).toEqual(["child", "worker", "origins", "etcd (child alive: false)"]);
    expect(lines.join("")).toContain("[origins]");
    expect(lines.join("")).toContain("did not stop: Error: already closed");
  }, 30_000);
});
