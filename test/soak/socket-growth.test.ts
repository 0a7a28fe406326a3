import { describe, expect, it } from "vitest";
import type { Sample } from "../../soak/samples.js";
import { socketGrowth } from "../../soak/socket-growth.js";

/** 30 minutes of m0's holders every 10 s: peers step from 15 to 20 at t=1500, files stay 12. */
function samples(): Sample[] {
  const out: Sample[] = [];
  for (let t = 0; t <= 1800; t += 10) {
    out.push({ t, series: "etcd:m0<-peer", figure: "sockets", value: t >= 1500 ? 20 : 15 });
    out.push({ t, series: "etcd:m0<-other", figure: "sockets", value: 12 });
    out.push({ t, series: "etcd:m0<-heartbeat", figure: "sockets", value: t % 60 === 0 ? 27 : 26 });
    out.push({ t, series: "etcd:m1<-peer", figure: "sockets", value: t >= 1500 ? 30 : 15 });
    out.push({ t, series: "etcd:m0#42", figure: "fds", value: t >= 1500 ? 67 : 62 });
  }
  return out;
}

describe("socketGrowth", () => {
  it("names the holders of a member's descriptors whose highest count rose over the window", () => {
    expect(socketGrowth(samples(), "etcd:m0#42", 900)).toBe("peer +5 (15→20)");
  });

  it("says nothing when no holder rose, or for a series that is not an etcd member's", () => {
    expect(socketGrowth(samples(), "etcd:m0#42", 0)).toBe("peer +5 (15→20)");
    expect(
      socketGrowth(
        samples().filter((s) => s.t < 1500),
        "etcd:m0#42",
        0,
      ),
    ).toBeNull();
    expect(socketGrowth(samples(), "pusher:soak-a#7@leader", 900)).toBeNull();
    expect(socketGrowth(samples(), "etcd:m2#43", 900)).toBeNull();
  });
});
