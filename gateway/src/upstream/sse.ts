/**
 * Incremental Server-Sent Events parser (WHATWG "event stream interpretation") over a byte stream.
 *
 * Works on bytes, not strings: line terminators (LF, CR, CRLF) are located with native
 * `Buffer#indexOf`, and only complete lines are decoded, so multi-byte UTF-8 sequences split
 * across chunks are never corrupted and there is no repeated string concatenation of the
 * whole stream. Chunk boundaries may fall anywhere, including between the CR and LF of a CRLF.
 */

export interface SseEvent {
  /** Value of the last `event:` field of this event, or undefined (the spec's default "message"). */
  event: string | undefined;
  /** `data:` lines joined with "\n". */
  data: string;
  /** Last event id seen on the stream, if any. */
  id: string | undefined;
}

/**
 * An SSE-level error report: `event: error` (Anthropic, OpenAI's Responses API and several
 * OpenAI-compatible servers send it). Every adapter treats it as the provider reporting an error,
 * whatever its data looks like; see the mid-stream rule in ./errors.ts (UPSTREAM_ERRORS).
 */
export const isErrorEvent = (ev: SseEvent): boolean => ev.event === 'error';

/** The data of an error event: parsed JSON, or the text itself (an error report is never malformed). */
export function errorEventData(ev: SseEvent): unknown {
  try {
    return JSON.parse(ev.data);
  } catch {
    return ev.data;
  }
}

const LF = 10;
const CR = 13;
const COLON = 58;
const SPACE = 32;

function asBuffer(chunk: Uint8Array | string): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  if (Buffer.isBuffer(chunk)) return chunk;
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

export class SseParser {
  /** Bytes of a line that is not yet terminated (usually empty). */
  private pending: Buffer[] = [];
  /** The previous chunk ended in CR: a leading LF of the next chunk belongs to it. */
  private skipLF = false;
  private started = false;
  private dataLines: string[] = [];
  private eventType: string | undefined = undefined;
  private lastId: string | undefined = undefined;

  /** Feeds one chunk; complete events are appended to `out`. */
  push(input: Uint8Array | string, out: SseEvent[]): void {
    const buf = asBuffer(input);
    const len = buf.length;
    if (len === 0) return;
    let pos = 0;
    if (!this.started) {
      this.started = true;
      // UTF-8 BOM at stream start
      if (len >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) pos = 3;
    }
    if (this.skipLF) {
      this.skipLF = false;
      if (buf[pos] === LF) pos++;
    }
    let crIdx = buf.indexOf(CR, pos);
    let lfIdx = buf.indexOf(LF, pos);
    while (pos < len) {
      if (crIdx !== -1 && crIdx < pos) crIdx = buf.indexOf(CR, pos);
      if (lfIdx !== -1 && lfIdx < pos) lfIdx = buf.indexOf(LF, pos);
      let end: number;
      let next: number;
      if (lfIdx === -1 && crIdx === -1) break;
      if (crIdx === -1 || (lfIdx !== -1 && lfIdx < crIdx)) {
        end = lfIdx;
        next = lfIdx + 1;
      } else {
        end = crIdx;
        if (crIdx + 1 < len) {
          next = buf[crIdx + 1] === LF ? crIdx + 2 : crIdx + 1;
        } else {
          next = len;
          this.skipLF = true;
        }
      }
      if (this.pending.length > 0) {
        this.pending.push(buf.subarray(pos, end));
        const line = Buffer.concat(this.pending);
        this.pending = [];
        this.line(line, 0, line.length, out);
      } else {
        this.line(buf, pos, end, out);
      }
      pos = next;
    }
    if (pos < len) {
      // Copy: the caller may reuse the chunk's memory.
      this.pending.push(Buffer.from(buf.subarray(pos, len)));
    }
  }

  /**
   * Ends the stream. Per the spec, an event that was not terminated by a blank line is discarded,
   * which is what lets callers detect a cut stream. Returns true when bytes or a partial event
   * were left over (i.e. the stream ended mid-event).
   */
  end(): boolean {
    const leftover = this.pending.length > 0 || this.dataLines.length > 0;
    this.pending = [];
    this.dataLines = [];
    this.eventType = undefined;
    return leftover;
  }

  private line(buf: Buffer, start: number, end: number, out: SseEvent[]): void {
    if (start === end) {
      this.dispatch(out);
      return;
    }
    const c0 = buf[start];
    if (c0 === COLON) return; // comment
    // Fast path for the overwhelmingly common "data:" line.
    if (
      c0 === 100 /* d */ &&
      end - start >= 5 &&
      buf[start + 1] === 97 &&
      buf[start + 2] === 116 &&
      buf[start + 3] === 97 &&
      buf[start + 4] === COLON
    ) {
      let vs = start + 5;
      if (vs < end && buf[vs] === SPACE) vs++;
      this.dataLines.push(buf.toString('utf8', vs, end));
      return;
    }
    let colon = buf.indexOf(COLON, start);
    if (colon === -1 || colon > end) colon = end;
    const field = buf.toString('utf8', start, colon);
    let vs = colon + 1;
    if (vs < end && buf[vs] === SPACE) vs++;
    const value = vs >= end ? '' : buf.toString('utf8', vs, end);
    switch (field) {
      case 'data':
        this.dataLines.push(value);
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      default:
        // `retry` and unknown fields are ignored.
        break;
    }
  }

  private dispatch(out: SseEvent[]): void {
    const lines = this.dataLines;
    if (lines.length === 0) {
      this.eventType = undefined;
      return;
    }
    const data = lines.length === 1 ? (lines[0] as string) : lines.join('\n');
    out.push({ event: this.eventType, data, id: this.lastId });
    this.dataLines = [];
    this.eventType = undefined;
  }
}

/** Result of iterating a byte stream as SSE. `truncated` is set once the source ends mid-event. */
export interface SseIterationState {
  truncated: boolean;
}

/** Parses an async byte stream into SSE events. */
export async function* parseSse(
  source: AsyncIterable<Uint8Array | string>,
  state?: SseIterationState,
): AsyncGenerator<SseEvent, void, undefined> {
  const parser = new SseParser();
  const out: SseEvent[] = [];
  for await (const chunk of source) {
    parser.push(chunk, out);
    if (out.length > 0) {
      for (let i = 0; i < out.length; i++) yield out[i] as SseEvent;
      out.length = 0;
    }
  }
  const leftover = parser.end();
  if (state) state.truncated = leftover;
}
