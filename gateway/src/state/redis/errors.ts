/**
 * Which Redis failures are worth retrying. Connection-level failures (closed, not connected, timed
 * out, cluster unreachable) and the replies a busy or recovering server gives are; any other reply
 * error (wrong type, bad argument) would fail again, so retrying it only holds up the buffer.
 */
const TRANSIENT_REPLY = /^(LOADING|BUSY|TRYAGAIN|CLUSTERDOWN|MASTERDOWN|OOM|READONLY|NOREPLICAS|MOVED|ASK)\b/;

export function isRetryable(err: unknown): boolean {
  if (!(err instanceof Error) || err.name !== 'ReplyError') return true;
  // A MULTI refused at EXEC carries the errors of the commands that made it fail.
  const previous = (err as { previousErrors?: unknown }).previousErrors;
  const first = Array.isArray(previous) ? previous[0] : undefined;
  const message = err.message.startsWith('EXECABORT') && first instanceof Error ? first.message : err.message;
  return TRANSIENT_REPLY.test(message);
}
