/** A counter from the pusher's `/metrics`, or null when it does not answer. */
export async function metricsCounter(port: number, name: string): Promise<number | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, {
      signal: AbortSignal.timeout(5_000),
    });
    const m = new RegExp(`^${name} (\\d+(?:\\.\\d+)?)$`, "m").exec(await res.text());
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}
