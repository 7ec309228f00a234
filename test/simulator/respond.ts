/** Non-streamed answers, with the body-level faults (first-byte delay, malformed JSON, cut) applied. */
import type { ErrorReply, Exchange } from './exchange.ts';

export async function sendBody(
  ex: Exchange,
  status: number,
  contentType: string,
  payload: string | Buffer,
  extraHeaders: Record<string, string> = {},
): Promise<void> {
  const { res, fault } = ex;
  if (res.destroyed) return;
  let body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  if (fault.deepJson && contentType.startsWith('application/json') && body[0] === 0x7b /* { */) {
    // Valid JSON nested deeper than anything real: what an answer must not be able to overflow.
    const n = fault.deepJson;
    const head = `{"sim_nested":${'['.repeat(n)}${']'.repeat(n)}${body.length > 2 ? ',' : ''}`;
    body = Buffer.concat([Buffer.from(head), body.subarray(1)]);
  }
  if (fault.malformed && contentType.startsWith('application/json')) {
    // Truncated JSON: the classic upstream failure that a JSON.parse must survive.
    body = body.subarray(0, Math.max(1, Math.floor(body.length / 2)));
  }
  res.writeHead(status, {
    ...ex.api.headers(),
    ...extraHeaders,
    'content-type': contentType,
    'content-length': String(body.length),
  });
  if (fault.firstByteDelayMs) {
    res.flushHeaders();
    await ex.sleep(fault.firstByteDelayMs);
    if (res.destroyed) return;
  }
  if (fault.cutAfterChunks !== undefined) {
    // Half the promised content-length, then a dead socket: the client sees a premature close.
    res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
    return;
  }
  res.end(body);
}

export function sendJson(ex: Exchange, status: number, value: unknown, headers?: Record<string, string>) {
  return sendBody(ex, status, 'application/json', JSON.stringify(value), headers);
}

/** Error replies are sent verbatim: body faults only apply to successful answers. */
export function sendError(ex: Exchange, reply: ErrorReply): void {
  const { res } = ex;
  if (res.destroyed) return;
  const body = reply.text ? reply.text.content : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    ...ex.api.headers(),
    ...reply.headers,
    'content-type': reply.text ? reply.text.contentType : 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}
