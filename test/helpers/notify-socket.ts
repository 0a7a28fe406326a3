import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** One datagram systemd would have read from `$NOTIFY_SOCKET`, with its arrival time (ms). */
export interface Notification {
  readonly at: number;
  readonly fields: Readonly<Record<string, string>>;
}

/** A stand-in for systemd's notification socket: an AF_UNIX datagram socket that records. */
export interface NotifySocket {
  readonly path: string;
  readonly received: readonly Notification[];
  /** Resolves with the first notification (from now on or already received) that `match` accepts. */
  waitFor(match: (n: Notification) => boolean, timeoutMs: number): Promise<Notification>;
  close(): void;
}

// Node has no AF_UNIX datagram socket: Python's standard library binds and reads it.
const RECEIVER = `
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("bound", flush=True)
while True:
    data = s.recv(65536)
    print(json.dumps({"at": time.time() * 1000, "text": data.decode("utf-8", "replace")}), flush=True)
`;

/** Binds a notification socket in a temporary directory. */
export async function startNotifySocket(): Promise<NotifySocket> {
  const dir = mkdtempSync(join(tmpdir(), "notify-"));
  const path = join(dir, "notify.sock");
  const child: ChildProcess = spawn("python3", ["-c", RECEIVER, path], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const received: Notification[] = [];
  const waiters: (() => void)[] = [];
  let buffer = "";
  await new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`notify receiver exited ${code}`)));
    child.stdout?.on("data", (d: Buffer) => {
      buffer += d.toString();
      for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        if (line === "bound") resolve();
        else {
          const { at, text } = JSON.parse(line) as { at: number; text: string };
          const fields: Record<string, string> = {};
          for (const l of text.split("\n")) {
            const eq = l.indexOf("=");
            if (eq > 0) fields[l.slice(0, eq)] = l.slice(eq + 1);
          }
          received.push({ at, fields });
          for (const w of waiters.splice(0)) w();
        }
      }
    });
  });
  return {
    path,
    received,
    waitFor(match, timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(`no matching notification in ${timeoutMs} ms: ${JSON.stringify(received)}`),
            ),
          timeoutMs,
        );
        const check = () => {
          const hit = received.find(match);
          if (hit) {
            clearTimeout(timer);
            resolve(hit);
          } else waiters.push(check);
        };
        check();
      });
    },
    close() {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
