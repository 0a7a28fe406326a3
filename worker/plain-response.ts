/** Responses the edge made itself, as against an origin's (recording tells them apart, §12). */
const edgeAnswers = new WeakSet<Response>();

/** A plain-text answer of the edge's own (a 404, a 508, a 502/504 when no origin answered) that no cache keeps. */
export function plainResponse(status: number, text: string): Response {
  const response = new Response(`${text}\n`, {
    status,
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
  });
  edgeAnswers.add(response);
  return response;
}

/** True for a response of the edge's own (`plainResponse`, or one `markEdgeAnswer` carried it to). */
export function isEdgeAnswer(response: Response): boolean {
  return edgeAnswers.has(response);
}

/** Marks `response` as the edge's own, as the response it was made from. */
export function markEdgeAnswer(response: Response): void {
  edgeAnswers.add(response);
}
