import { createServer } from "node:net";

/** Whether nothing listens on 127.0.0.1:port right now. */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** Thrown when a port the stack needs is taken, naming the variable that moves it. */
export class PortInUseError extends Error {
  override readonly name = "PortInUseError";
}

/** Fails fast, before starting anything, if one of the stack's ports is taken. */
export async function checkPorts(
  ports: readonly { what: string; port: number; setting: string }[],
): Promise<void> {
  const busy: string[] = [];
  for (const p of ports) {
    if (!(await portFree(p.port)))
      busy.push(`${p.what} port ${p.port} is in use (set ${p.setting} to move it)`);
  }
  if (busy.length > 0) {
    throw new PortInUseError(`${busy.join("; ")}. Is another \`npm start\` running?`);
  }
}
