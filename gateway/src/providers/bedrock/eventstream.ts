/**
 * The AWS event-stream framing of ConverseStream (`application/vnd.amazon.eventstream`): binary
 * frames of [total length, headers length, prelude CRC32, headers, payload, message CRC32]. Frames
 * are cut out of the byte stream by their length and decoded by the AWS SDK's codec
 * (@smithy/core/event-streams), which checks both CRCs; a mismatch is a malformed answer. Each
 * frame becomes the event shape the stream mappers take: `event` is the `:event-type` header (or
 * `error` for exceptions, with `{type, message}` data), `data` the JSON payload.
 */
import { badResponse } from '../../upstream/errors.ts';
import type { SseEvent } from '../../upstream/sse.ts';
import type { EventParser } from '../common.ts';

type EventStreamModule = typeof import('@smithy/core/event-streams');
type Codec = InstanceType<EventStreamModule['EventStreamCodec']>;

let loading: Promise<EventStreamModule> | undefined;

export function loadEventStreams(): Promise<EventStreamModule> {
  loading ??= import('@smithy/core/event-streams').catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

const toUtf8 = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
const fromUtf8 = (s: string): Uint8Array => Buffer.from(s, 'utf8');

/** The largest frame AWS sends is 16 MiB; a bigger length means the bytes are not frames. */
const MAX_FRAME = 16 * 1024 * 1024;
const MIN_FRAME = 16;

export async function eventStreamParser(): Promise<EventParser> {
  const { EventStreamCodec } = await loadEventStreams();
  return new EventStreamParser(new EventStreamCodec(toUtf8, fromUtf8));
}

/**
 * A bad frame fails the stream, but the frames before it in the same read are delivered first:
 * the error waits for the next push (or the end).
 */
class EventStreamParser implements EventParser {
  #pending: Buffer = Buffer.alloc(0);
  #failed: unknown;
  readonly #codec: Codec;

  constructor(codec: Codec) {
    this.#codec = codec;
  }

  push(chunk: Buffer, out: SseEvent[]): void {
    if (this.#failed !== undefined) throw this.#failed;
    let buf = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const before = out.length;
    try {
      while (buf.length >= 4) {
        const length = buf.readUInt32BE(0);
        if (length < MIN_FRAME || length > MAX_FRAME)
          throw badResponse(`upstream sent an event-stream frame of impossible length ${length}`);
        if (buf.length < length) break;
        out.push(this.#decode(buf.subarray(0, length)));
        buf = buf.subarray(length);
      }
    } catch (err) {
      if (out.length === before) throw err;
      this.#failed = err;
      buf = Buffer.alloc(0);
    }
    // Copied: the caller may reuse the chunk's memory.
    this.#pending = Buffer.from(buf);
  }

  end(): boolean {
    if (this.#failed !== undefined) throw this.#failed;
    const leftover = this.#pending.length > 0;
    this.#pending = Buffer.alloc(0);
    return leftover;
  }

  #decode(frame: Buffer): SseEvent {
    let message: ReturnType<Codec['decode']>;
    try {
      message = this.#codec.decode(frame);
    } catch (err) {
      throw badResponse(`upstream sent a corrupt event-stream frame: ${(err as Error).message}`, 502, err);
    }
    const header = (name: string): string | undefined => {
      const h = message.headers[name];
      return h && h.type === 'string' ? h.value : undefined;
    };
    const payload = toUtf8(message.body);
    const kind = header(':message-type');
    if (kind === 'exception' || kind === 'error') {
      const type = header(':exception-type') ?? header(':error-code') ?? 'error';
      let text = header(':error-message');
      if (text === undefined) {
        try {
          const body = JSON.parse(payload) as { message?: unknown; Message?: unknown };
          const m = body.message ?? body.Message;
          text = typeof m === 'string' ? m : payload;
        } catch {
          text = payload;
        }
      }
      return { event: 'error', data: JSON.stringify({ type, message: text }), id: undefined };
    }
    return { event: header(':event-type'), data: payload, id: undefined };
  }
}
