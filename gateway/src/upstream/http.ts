/**
 * Upstream HTTP layer: one keep-alive undici Pool per (origin, connect timeout), reused across
 * requests; per-request first-byte timeout and a total deadline, both tied to the caller's signal,
 * so the upstream request is aborted as soon as the client goes away. Calls go through the pool's
 * dispatch handler API (body.ts), not `Pool.request`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FormData } from 'undici';
import { jsonTooDeep, UPSTREAM_MAX_JSON_DEPTH } from '../json/depth.ts';
import type { UpstreamTarget } from '../providers/types.ts';
import type { TraceContext } from '../tracing/types.ts';
import { type UpstreamBody, UpstreamCall } from './body.ts';
import { UpstreamError } from './errors.ts';
import { Pool } from './undici-parts.ts';

const pools = new Map<string, Pool>();

const POOL_OPTIONS = {
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 600_000,
  pipelining: 1,
} as const;

/** Returns the shared pool for an origin ("https://api.openai.com"); never one per request. */
export function getPool(origin: string, connectMs: number): Pool {
  const key = `${connectMs}|${origin}`;
  let pool = pools.get(key);
  if (pool === undefined) {
    pool = new Pool(origin, { ...POOL_OPTIONS, connect: { timeout: connectMs } });
    pools.set(key, pool);
  }
  return pool;
}

/** Closes every pool (graceful shutdown, tests). */
export async function closeUpstreamPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.allSettled(all.map((p) => p.close()));
}

/** Splits "https://host:port/path?q" into origin and path without allocating a URL object. */
export function splitUrl(url: string): { origin: string; path: string } {
  const scheme = url.indexOf('://');
  const slash = url.indexOf('/', scheme === -1 ? 0 : scheme + 3);
  if (slash === -1) return { origin: url, path: '/' };
  return { origin: url.slice(0, slash), path: url.slice(slash) };
}

const CLIENT_ABORT = 'client';
const DEADLINE = 'timeout';
const FIRST_BYTE = 'first-byte';

/**
 * A total deadline and a first-byte timeout combined with the caller's signal; whichever fires first
 * aborts the upstream call it is bound to. Releasable as soon as the response has been consumed.
 *
 * One timer serves both: it is set for the nearer of the two, and when the first-byte one passes
 * with the headers in, it is set again for what is left of the total. A call whose headers arrive in
 * time (nearly all) thus costs one timer, set once and cleared once. undici's own headersTimeout runs
 * on a coarse (~0.5–1 s) timer wheel, too coarse for sub-second first-byte budgets, so it is only a
 * backstop.
 */
export class Deadline {
  reason: typeof CLIENT_ABORT | typeof DEADLINE | typeof FIRST_BYTE | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** When the total deadline passes (performance.now() clock); Infinity for none. */
  private readonly totalAt: number;
  private readonly totalMs: number;
  private readonly firstByteMs: number;
  /** Whether the timer that runs stands for the first-byte timeout rather than the total. */
  private timingFirstByte = false;
  private headersIn = false;
  private readonly clientSignal: AbortSignal;
  private call: UpstreamCall | undefined;
  private error: Error | undefined;
  private readonly onClientAbort = (): void => {
    this.fire(CLIENT_ABORT, new UpstreamError('client aborted the request', abortedInit()));
  };
  private readonly onTimer = (): void => {
    this.timer = undefined;
    if (this.timingFirstByte) {
      this.timingFirstByte = false;
      if (!this.headersIn) {
        this.fire(FIRST_BYTE, timeoutError(`upstream sent no response headers within ${this.firstByteMs}ms`));
        return;
      }
      const left = this.totalAt - performance.now();
      if (left > 0) {
        if (Number.isFinite(left)) this.timer = setTimeout(this.onTimer, left);
        return;
      }
    }
    this.fire(DEADLINE, timeoutError(`upstream did not complete within ${this.totalMs}ms`));
  };

  /** `firstByteMs`: aborts unless headersArrived() is called within it (0 or Infinity for none). */
  constructor(clientSignal: AbortSignal, totalMs: number, firstByteMs = 0) {
    this.clientSignal = clientSignal;
    this.totalMs = totalMs;
    this.firstByteMs = firstByteMs;
    const hasTotal = totalMs > 0 && Number.isFinite(totalMs);
    this.totalAt = hasTotal ? performance.now() + totalMs : Number.POSITIVE_INFINITY;
    if (clientSignal.aborted) {
      this.onClientAbort();
      return;
    }
    clientSignal.addEventListener('abort', this.onClientAbort, { once: true });
    // On a tie the total deadline is the one reported: the answer could not have completed in time anyway.
    if (firstByteMs > 0 && Number.isFinite(firstByteMs) && !(hasTotal && totalMs <= firstByteMs)) {
      this.timingFirstByte = true;
      this.timer = setTimeout(this.onTimer, firstByteMs);
    } else if (hasTotal) {
      this.timer = setTimeout(this.onTimer, totalMs);
    }
  }

  private fire(reason: NonNullable<Deadline['reason']>, err: Error): void {
    if (this.reason === undefined) this.reason = reason;
    if (this.error !== undefined) return;
    this.error = err;
    this.call?.abort(err);
  }

  /** The call this deadline aborts; aborted at once if the deadline already fired. */
  bind(call: UpstreamCall): void {
    this.call = call;
    if (this.error !== undefined) call.abort(this.error);
  }

  /** Stops the first-byte timeout; the total deadline keeps running. */
  headersArrived(): void {
    this.headersIn = true;
  }

  /** Releases the timer and the listener on the client's signal. Idempotent. */
  done(): void {
    this.headersIn = true;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.clientSignal.removeEventListener('abort', this.onClientAbort);
  }
}

function abortedInit() {
  return {
    code: 'UPSTREAM_ABORTED' as const,
    status: undefined,
    providerMessage: 'client aborted the request',
  };
}

function timeoutError(message: string, cause?: unknown): UpstreamError {
  return new UpstreamError(message, {
    code: 'UPSTREAM_TIMEOUT',
    status: 504,
    providerMessage: message,
    cause,
  });
}

export type TransportPhase = 'request' | 'body' | 'stream';

/** Maps a transport-level failure (undici error, abort) to an UpstreamError. */
export function mapTransportError(err: unknown, deadline: Deadline, phase: TransportPhase): UpstreamError {
  if (deadline.reason === CLIENT_ABORT) {
    return new UpstreamError('client aborted the request', { ...abortedInit(), cause: err });
  }
  if (deadline.reason === DEADLINE) {
    return err instanceof UpstreamError ? err : timeoutError('upstream total deadline exceeded', err);
  }
  if (deadline.reason === FIRST_BYTE) {
    return err instanceof UpstreamError
      ? err
      : timeoutError('upstream sent no response headers in time', err);
  }
  if (err instanceof UpstreamError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  switch (code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
      return timeoutError('upstream sent no response headers within the first-byte timeout', err);
    case 'UND_ERR_BODY_TIMEOUT':
      return timeoutError('upstream body stalled', err);
    case 'UND_ERR_CONNECT_TIMEOUT':
      return timeoutError('timed out connecting to upstream', err);
  }
  if (phase === 'stream') {
    return new UpstreamError(`upstream stream was cut: ${message}`, {
      code: 'UPSTREAM_STREAM_CUT',
      status: 502,
      providerMessage: message,
      cause: err,
    });
  }
  if (phase === 'body') {
    return new UpstreamError(`reading upstream response failed: ${message}`, {
      code: 'UPSTREAM_BAD_RESPONSE',
      status: 502,
      providerMessage: message,
      cause: err,
    });
  }
  return new UpstreamError(`upstream connection failed: ${typeof code === 'string' ? code : message}`, {
    code: 'UPSTREAM_CONNECT',
    status: 502,
    providerMessage: message,
    cause: err,
  });
}

export interface SendOptions {
  /** Only its timeouts are read: credential exchanges pass the provider's target too. */
  target: Pick<UpstreamTarget, 'timeouts'>;
  url: string;
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | Uint8Array | FormData;
  signal: AbortSignal;
  /** The provider call's trace context, sent as `traceparent` and `tracestate` (tracing on only). */
  trace?: TraceContext | undefined;
}

export interface UpstreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: UpstreamBody;
  deadline: Deadline;
}

/**
 * Sends the request and resolves once response headers arrived. The caller owns `body` and must
 * consume it (readJson/readBytes/readText or iterate it) and call `deadline.done()`; the helpers
 * below do both.
 */
export async function send(opts: SendOptions): Promise<UpstreamResponse> {
  const { timeouts } = opts.target;
  const deadline = new Deadline(opts.signal, timeouts.totalMs, timeouts.firstByteMs);
  if (deadline.reason !== undefined) {
    deadline.done();
    throw mapTransportError(undefined, deadline, 'request');
  }
  const { origin, path } = splitUrl(opts.url);
  const call = new UpstreamCall();
  deadline.bind(call);
  try {
    getPool(origin, timeouts.connectMs).dispatch(
      {
        path,
        method: opts.method ?? 'POST',
        // Added after any signing: SigV4 signs the headers it lists, and these are not among them.
        headers: opts.trace ? { ...opts.headers, ...opts.trace } : opts.headers,
        body: opts.body ?? null,
        // Backstop only (coarse timer); the precise first-byte timeout is the Deadline's.
        headersTimeout: timeouts.firstByteMs + 1000,
        // Inactivity between body chunks is bounded by the total deadline instead: streaming
        // reasoning models can legitimately pause for a long time between chunks.
        bodyTimeout: 0,
      },
      call,
    );
    const head = await call.head;
    deadline.headersArrived();
    return { status: head.status, headers: head.headers, body: head.body, deadline };
  } catch (err) {
    deadline.done();
    throw mapTransportError(err, deadline, 'request');
  }
}

/** Reads and parses a JSON body. Invalid JSON → UPSTREAM_BAD_RESPONSE. */
export async function readJson(res: UpstreamResponse): Promise<unknown> {
  let text: string;
  try {
    text = await res.body.text();
  } catch (err) {
    throw mapTransportError(err, res.deadline, 'body');
  } finally {
    res.deadline.done();
  }
  if (jsonTooDeep(text, UPSTREAM_MAX_JSON_DEPTH))
    throw new UpstreamError(
      `upstream returned JSON nested more than ${UPSTREAM_MAX_JSON_DEPTH} levels deep`,
      {
        code: 'UPSTREAM_BAD_RESPONSE',
        status: 502,
        providerMessage: `the answer nests JSON more than ${UPSTREAM_MAX_JSON_DEPTH} levels deep`,
      },
    );
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UpstreamError('upstream returned a body that is not valid JSON', {
      code: 'UPSTREAM_BAD_RESPONSE',
      status: 502,
      providerMessage: text.length > 200 ? `${text.slice(0, 200)}…` : text,
      cause: err,
    });
  }
}

export async function readBytes(res: UpstreamResponse): Promise<Uint8Array> {
  try {
    return new Uint8Array(await res.body.arrayBuffer());
  } catch (err) {
    throw mapTransportError(err, res.deadline, 'body');
  } finally {
    res.deadline.done();
  }
}

export async function readText(res: UpstreamResponse): Promise<string> {
  try {
    return await res.body.text();
  } catch (err) {
    throw mapTransportError(err, res.deadline, 'body');
  } finally {
    res.deadline.done();
  }
}

const ERROR_BODY_CAP = 64 * 1024;

/**
 * Reads (at most 64 KiB of) an error body. Never throws: a failed read yields what was received.
 * An abort by the client still surfaces as UPSTREAM_ABORTED via `res.deadline.reason`.
 */
export async function readErrorBody(res: UpstreamResponse): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= ERROR_BODY_CAP) break;
    }
  } catch {
    // keep what we have
  } finally {
    res.deadline.done();
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Destroys an unconsumed body so the socket is not left half-read. */
export function discard(res: UpstreamResponse): void {
  res.deadline.done();
  if (!res.body.destroyed) res.body.destroy();
}
