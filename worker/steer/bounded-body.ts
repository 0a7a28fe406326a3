/** A body read up to a bound: its text, or, past the bound, a stream of the same bytes. */
export type BoundedBody =
  | { readonly kind: "text"; readonly text: string; readonly bytes: Uint8Array }
  | { readonly kind: "stream"; readonly body: ReadableStream<Uint8Array> | null };

function replay(
  chunks: readonly Uint8Array[],
  reader: ReadableStreamDefaultReader<Uint8Array> | null,
): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const held = chunks[i];
      if (held !== undefined) {
        i += 1;
        controller.enqueue(held);
        return;
      }
      if (!reader) return controller.close();
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      return reader?.cancel(reason);
    },
  });
}

/**
 * Reads `body` as UTF-8 (a byte order mark kept in the text) while it stays within `maxBytes`. A longer body, or one that is not
 * UTF-8, comes back as a stream of exactly the bytes it had (those read so far, then the rest),
 * so the caller passes it on unchanged; only the bound is ever held in memory.
 */
export async function boundedBody(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<BoundedBody> {
  if (body === null) return { kind: "text", text: "", bytes: new Uint8Array(0) };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > maxBytes) return { kind: "stream", body: replay(chunks, reader) };
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    return { kind: "text", text, bytes };
  } catch {
    return { kind: "stream", body: replay([bytes], null) };
  }
}
