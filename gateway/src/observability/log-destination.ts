import pino from 'pino';

/** Bytes of log lines held before one write. */
const BUFFER_BYTES = 8192;
/** The longest a line waits when traffic is too light to fill the buffer. */
const FLUSH_WITHIN_MS = 250;

/**
 * stdout for a gateway pod's logs, buffered. At `info` a pod writes a line per request; pino's
 * default destination makes that one synchronous write syscall per request, ~20 % of the CPU per
 * request at 50 connections on the bench machine. Here lines go out in writes of ~8 KB, at most
 * 250 ms after the first line held, and whatever is held is written when the process exits (pino's
 * own exit hook); a SIGKILL can lose what the buffer held, at most that quarter of a second.
 *
 * The flush is a timer armed by a write, not a fixed interval: a pod with nothing to log is not
 * woken four times a second for it.
 */
export function bufferedStdout(): { stream: pino.DestinationStream; flush(): void } {
  const out = pino.destination({ dest: 1, sync: false, minLength: BUFFER_BYTES });
  let armed: NodeJS.Timeout | undefined;
  const flush = (): void => {
    clearTimeout(armed);
    armed = undefined;
    try {
      out.flush();
    } catch {
      // Ended at exit: nothing left to write.
    }
  };
  const stream: pino.DestinationStream = {
    write(line: string): void {
      out.write(line);
      armed ??= setTimeout(flush, FLUSH_WITHIN_MS).unref();
    },
  };
  return { stream, flush };
}
