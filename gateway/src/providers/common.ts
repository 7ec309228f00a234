/** Helpers shared by several provider adapters. */
import { jsonTooDeep, UPSTREAM_MAX_JSON_DEPTH } from '../json/depth.ts';
import { badResponse, parseRetryAfter, streamCut, UpstreamError, unsupported } from '../upstream/errors.ts';
import {
  discard,
  mapTransportError,
  readErrorBody,
  type SendOptions,
  send,
  type UpstreamResponse,
} from '../upstream/http.ts';
import { type SseEvent, SseParser } from '../upstream/sse.ts';
import type {
  CacheBreakpoint,
  ChatResult,
  CompletionResult,
  ContentPart,
  RequestKind,
  StreamEvent,
  StructuredOutput,
  Usage,
} from './types.ts';

/** The request kinds an adapter serves: `supports` for the compiler, `check` before anything is sent. */
export function requestKinds(
  provider: string,
  kinds: readonly RequestKind[],
): { supports(kind: RequestKind): boolean; check(kind: RequestKind): void } {
  const set = new Set(kinds);
  return {
    supports: (kind) => set.has(kind),
    check(kind) {
      if (!set.has(kind)) throw unsupported(`${provider} does not support ${kind} requests`);
    },
  };
}

export function usageOf(prompt: unknown, completion: unknown, total?: unknown): Usage {
  const p = typeof prompt === 'number' ? prompt : 0;
  const c = typeof completion === 'number' ? completion : 0;
  const t = typeof total === 'number' ? total : p + c;
  return { prompt_tokens: p, completion_tokens: c, total_tokens: t };
}

const tokenCount = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;

/**
 * Usage with the prompt-cache split a provider reported: `read` and `write` are parts of `prompt`,
 * kept only when they are token counts and fit in it, so a malformed figure never prices more
 * input than the prompt had.
 */
export function usageWithCache(
  prompt: unknown,
  completion: unknown,
  total: unknown,
  cache: { read?: unknown; write?: unknown; write1h?: unknown },
): Usage {
  const u = usageOf(prompt, completion, total);
  const read = tokenCount(cache.read) ? cache.read : undefined;
  const write = tokenCount(cache.write) ? cache.write : undefined;
  if ((read ?? 0) + (write ?? 0) > u.prompt_tokens) return u;
  if (read !== undefined) u.cache_read_tokens = read;
  if (write !== undefined) {
    u.cache_write_tokens = write;
    if (tokenCount(cache.write1h) && cache.write1h > 0 && cache.write1h <= write)
      u.cache_write_1h_tokens = cache.write1h;
  }
  return u;
}

/** A system text and the cache breakpoint that ends at it. */
export interface SystemText {
  text: string;
  cache?: CacheBreakpoint | undefined;
}

/**
 * System texts as runs split at their breakpoints, each run's texts joined and carrying the
 * breakpoint that ends it; one run without a breakpoint when none has one. A breakpoint with no
 * text since the last one ends the same prefix as that one.
 */
export function systemRuns(texts: readonly SystemText[]): SystemText[] {
  const out: SystemText[] = [];
  let run: string[] = [];
  for (const t of texts) {
    if (t.text.length > 0) run.push(t.text);
    if (!t.cache) continue;
    if (run.length > 0) out.push({ text: run.join('\n\n'), cache: t.cache });
    else if (out.length > 0) out[out.length - 1]!.cache = t.cache;
    run = [];
  }
  if (run.length > 0) out.push({ text: run.join('\n\n') });
  return out;
}

/** The items without their cache breakpoints: the same array when none carries one. */
export function unmarked<T extends { cache?: CacheBreakpoint }>(items: T[]): T[] {
  if (!items.some((i) => i.cache !== undefined)) return items;
  return items.map((i) => {
    if (i.cache === undefined) return i;
    const { cache, ...rest } = i;
    return rest as T;
  });
}

export function trimSlash(url: string): string {
  return url.charCodeAt(url.length - 1) === 47 ? url.replace(/\/+$/, '') : url;
}

/** Text of a message content (text parts joined; image parts dropped). */
export function textOf(content: string | ContentPart[] | null | undefined): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  let out = '';
  for (const part of content) {
    if (part.type === 'text') out = out.length === 0 ? part.text : `${out}\n${part.text}`;
  }
  return out;
}

/** `data:image/png;base64,AAAA` → {mimeType, data}; undefined for anything else. */
export function parseDataUrl(url: string): { mimeType: string; data: string } | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma === -1) return undefined;
  const meta = url.slice(5, comma);
  if (!meta.endsWith(';base64')) return undefined;
  return { mimeType: meta.slice(0, -7) || 'application/octet-stream', data: url.slice(comma + 1) };
}

const EXT_MIME: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
};

export function guessImageMime(url: string): string {
  const path = url.split(/[?#]/, 1)[0] ?? '';
  const dot = path.lastIndexOf('.');
  return (dot !== -1 && EXT_MIME[path.slice(dot + 1).toLowerCase()]) || 'image/jpeg';
}

export const JSON_ONLY_INSTRUCTION =
  'Respond only with a single valid JSON object. Do not wrap it in code fences and do not add any text before or after it.';

/** Instruction used by providers without a native JSON-schema mode. */
export function structuredInstruction(s: StructuredOutput): string {
  return `Respond only with a single JSON object named "${s.name}" that conforms to this JSON Schema:\n${JSON.stringify(
    s.schema,
  )}\nDo not wrap it in code fences and do not add any text before or after it.`;
}

/** Float embedding → base64 of little-endian float32, as OpenAI's `encoding_format: "base64"`. */
export function floatsToBase64(values: number[]): string {
  const f32 = Float32Array.from(values);
  return Buffer.from(f32.buffer, f32.byteOffset, f32.byteLength).toString('base64');
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Tool-call arguments (a JSON string) as an object; Anthropic and Gemini need an object. */
export function parseJsonArgs(args: string): Record<string, unknown> {
  if (args === '') return {};
  try {
    const v: unknown = JSON.parse(args);
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

/** Extracted from a provider error body. */
export interface ProviderErrorInfo {
  message: string | undefined;
  code: string | undefined;
}

/**
 * Builds the UpstreamError for a non-2xx response: reads (a capped amount of) the error body,
 * lets the provider extract its message, and classifies by status (UPSTREAM_ERRORS), unless the
 * provider's `retryable` says its error body outranks the status.
 */
export async function statusError(
  res: UpstreamResponse,
  extract: (body: unknown) => ProviderErrorInfo,
  retryable?: (status: number, info: ProviderErrorInfo) => boolean,
): Promise<UpstreamError> {
  const text = await readErrorBody(res);
  if (res.deadline.reason !== undefined) return mapTransportError(undefined, res.deadline, 'body');
  let info: ProviderErrorInfo = { message: undefined, code: undefined };
  if (text.length > 0) {
    try {
      info = extract(JSON.parse(text));
    } catch {
      info = { message: undefined, code: undefined };
    }
  }
  const message = info.message ?? (text.length > 0 ? text.slice(0, 500) : `HTTP ${res.status}`);
  return new UpstreamError(`upstream responded ${res.status}: ${message}`, {
    code: 'UPSTREAM_STATUS',
    status: res.status,
    retryable: retryable?.(res.status, info),
    providerMessage: message,
    providerCode: info.code,
    retryAfterMs: parseRetryAfter(res.headers),
  });
}

export function parseEventJson(data: string): unknown {
  if (jsonTooDeep(data, UPSTREAM_MAX_JSON_DEPTH))
    throw badResponse(
      `upstream sent a stream event nested more than ${UPSTREAM_MAX_JSON_DEPTH} levels deep`,
      502,
    );
  try {
    return JSON.parse(data);
  } catch (err) {
    throw badResponse('upstream sent a malformed stream event', 502, err);
  }
}

/**
 * Splits a response byte stream into events: the SSE parser for every provider but Bedrock, whose
 * AWS event-stream frames are turned into the same event shape.
 */
export interface EventParser {
  /** Appends the complete events of this chunk to `out`; may throw UpstreamError. */
  push(chunk: Buffer, out: SseEvent[]): void;
  /** The source ended; true when it ended mid-event. */
  end(): boolean;
}

/** Turns provider SSE events into canonical stream events; one instance per stream. */
export interface StreamMapper {
  /** Handles one SSE event, pushing canonical events to `out`; may throw UpstreamError. */
  onEvent(ev: SseEvent, out: StreamEvent[]): void;
  /** Called when the byte stream ended cleanly; may push trailing events. Returns false if it was cut short. */
  end(out: StreamEvent[]): boolean;
}

/**
 * Shared streaming driver: sends, fails (before the first event) on a non-2xx status, then parses
 * SSE and maps each event. Transport errors mid-stream → UPSTREAM_STREAM_CUT (or TIMEOUT/ABORTED),
 * a stream that ends before the provider's terminal event → UPSTREAM_STREAM_CUT. Stopping the
 * iteration early destroys the upstream body.
 *
 * `prepare` runs on the first `next()`, so validation errors (e.g. UPSTREAM_UNSUPPORTED) surface
 * from the iteration like every other upstream failure; it may be async (request signing, tokens). The byte stream is parsed in place (one
 * generator between the socket and the caller, not a chain of them).
 */
export async function* runStream(
  prepare: () => SendOptions | Promise<SendOptions>,
  onStatus: (res: UpstreamResponse) => Promise<UpstreamError>,
  mapper: StreamMapper,
  parser: EventParser = new SseParser(),
): AsyncGenerator<StreamEvent, void, undefined> {
  const res = await send(await prepare());
  if (res.status < 200 || res.status >= 300) throw await onStatus(res);
  try {
    const ct = res.headers['content-type'];
    if (typeof ct === 'string' && ct.includes('application/json')) {
      // A 200 JSON body where an event stream was expected (some proxies do this for errors).
      const text = await res.body.text();
      throw badResponse(`upstream sent JSON instead of an event stream: ${text.slice(0, 300)}`);
    }
    const sse: SseEvent[] = [];
    const out: StreamEvent[] = [];
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      parser.push(chunk, sse);
      if (sse.length === 0) continue;
      for (let i = 0; i < sse.length; i++) mapper.onEvent(sse[i] as SseEvent, out);
      sse.length = 0;
      if (out.length > 0) {
        for (let i = 0; i < out.length; i++) yield out[i] as StreamEvent;
        out.length = 0;
      }
    }
    parser.end();
    if (res.deadline.reason !== undefined) throw mapTransportError(undefined, res.deadline, 'stream');
    const complete = mapper.end(out);
    for (let i = 0; i < out.length; i++) yield out[i] as StreamEvent;
    if (!complete) throw streamCut('upstream stream ended before its final event');
  } catch (err) {
    throw mapTransportError(err, res.deadline, 'stream');
  } finally {
    discard(res);
  }
}

/** A chat answer as a completion result, for providers that serve completions through their chat API. */
export function chatToCompletion(chat: ChatResult): CompletionResult {
  return {
    kind: 'completion',
    id: chat.id,
    text: chat.content ?? '',
    finish_reason: chat.finish_reason,
    usage: chat.usage,
    model: chat.model,
  };
}
