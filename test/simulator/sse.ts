/**
 * Streamed answers: framing helpers and a paced writer that applies the stream faults.
 * A stream is a list of frames; `paced` frames carry content and are spaced by chunkIntervalMs (the
 * bookkeeping frames around them go out immediately, so N chunks take (N-1) intervals).
 */
import type { Exchange } from './exchange.ts';

export interface Frame {
  prefix: string;
  json: string;
  suffix: string;
  paced?: boolean;
}

/** `data: <json>\n\n` (OpenAI); Gemini uses CRLF line ends. */
export function dataFrame(value: unknown, paced = false, eol = '\n'): Frame {
  return { prefix: 'data: ', json: JSON.stringify(value), suffix: eol + eol, paced };
}

/** `event: <name>\ndata: <json>\n\n` (Anthropic). */
export function eventFrame(event: string, value: unknown, paced = false): Frame {
  return { prefix: `event: ${event}\ndata: `, json: JSON.stringify(value), suffix: '\n\n', paced };
}

export function rawFrame(text: string, paced = false): Frame {
  return { prefix: '', json: text, suffix: '', paced };
}

export function frameText(f: Frame): string {
  return f.prefix + f.json + f.suffix;
}

/**
 * `encode` turns a frame into bytes (SSE text by default; Bedrock's binary event-stream frames).
 * It gets the frame's position so a fault can pick one frame.
 */
export async function writeStream(
  ex: Exchange,
  frames: Frame[],
  contentType = 'text/event-stream; charset=utf-8',
  encode: (f: Frame, index: number, all: Frame[]) => string | Buffer = frameText,
): Promise<void> {
  const { res, fault } = ex;
  if (res.destroyed) return;
  res.writeHead(200, {
    ...ex.api.headers(),
    'content-type': contentType,
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  res.flushHeaders();
  if (fault.firstByteDelayMs) await ex.sleep(fault.firstByteDelayMs);

  const out = fault.malformed ? corruptOne(frames) : frames;
  const limit = fault.cutAfterChunks !== undefined ? Math.min(fault.cutAfterChunks, out.length) : out.length;
  const interval = ex.chunkIntervalMs;

  if (interval <= 0) {
    if (limit > 0 && !res.destroyed) {
      const parts = out.slice(0, limit).map((f, i) => encode(f, i, out));
      res.write(
        parts.every((p) => typeof p === 'string')
          ? parts.join('')
          : Buffer.concat(parts.map((p) => Buffer.from(p))),
      );
    }
  } else {
    let pacedSeen = 0;
    for (let i = 0; i < limit; i++) {
      const frame = out[i]!;
      if (frame.paced && pacedSeen++ > 0) await ex.sleep(interval);
      if (res.destroyed) return;
      res.write(encode(frame, i, out));
    }
  }
  if (res.destroyed) return;
  if (fault.cutAfterChunks !== undefined) {
    // Flush what was written, then drop the socket without the chunked-encoding terminator.
    res.write('', () => res.socket?.destroy());
    return;
  }
  res.end();
}

/** Replaces the middle content frame's JSON with its first half. */
function corruptOne(frames: Frame[]): Frame[] {
  const paced = frames.map((f, i) => (f.paced ? i : -1)).filter((i) => i >= 0);
  const target = paced.length > 0 ? paced[Math.floor(paced.length / 2)]! : Math.floor(frames.length / 2);
  return frames.map((f, i) =>
    i === target ? { ...f, json: f.json.slice(0, Math.max(1, Math.floor(f.json.length / 2))) } : f,
  );
}
