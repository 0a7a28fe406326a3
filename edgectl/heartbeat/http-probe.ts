/** Probes a URL: true when it answers 2xx or 3xx within the timeout. Never throws. */
export function httpProbe(url: string, timeoutMs: number): () => Promise<boolean> {
  return async () => {
    try {
      const res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
      await res.body?.cancel().catch(() => undefined);
      return res.status >= 200 && res.status < 400;
    } catch {
      return false;
    }
  };
}
