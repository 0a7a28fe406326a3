import type { TextSink } from "./cli-io.js";

/**
 * A process stream (stdout, stderr) as a {@link TextSink} that goes quiet once its reader is gone
 * (`edgectl status | head -1`): the write fails with `EPIPE`, the rest of the output is dropped,
 * and the command finishes and exits with its own code instead of dying on an unhandled
 * `error` event. Any other write error stays fatal.
 */
export function processSink(stream: NodeJS.WriteStream): TextSink {
  let closed = false;
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (closed || err.code === "EPIPE") {
      closed = true;
      return;
    }
    throw err;
  });
  return {
    write: (text) => closed || stream.write(text),
    get isTTY() {
      return stream.isTTY === true;
    },
  };
}
