/** A plain-text answer of the edge's own (a 404, a 508, a 502/504 when no origin answered) that no cache keeps. */
export function plainResponse(status: number, text: string): Response {
  return new Response(`${text}\n`, {
    status,
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
  });
}
