/**
 * The mid-stream rule of UPSTREAM_ERRORS, for every adapter over a real socket: an error the
 * provider reports inside its event stream is UPSTREAM_STATUS with the status it stands for, the
 * same before and after the first content, and a stream that just stops is UPSTREAM_STREAM_CUT.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_TYPES, type ProviderType } from '#contract';
import { getAdapter } from '#gateway/providers/registry';
import type { StreamEvent } from '#gateway/providers/types';
import { closeUpstreamPools } from '#gateway/upstream/http';
import { eventFrame, exceptionFrame } from '../simulator/bedrock/eventstream.ts';
import { failure, makeTarget, simpleChat } from './helpers.ts';

type Family = 'openai' | 'anthropic' | 'gemini' | 'cohere' | 'bedrock';
const FAMILY: Record<ProviderType, Family> = {
  openai: 'openai',
  'azure-openai': 'openai',
  'openai-compatible': 'openai',
  anthropic: 'anthropic',
  gemini: 'gemini',
  // Vertex AI serves a Gemini model here (model "m"): Gemini's stream format.
  'vertex-ai': 'gemini',
  cohere: 'cohere',
  bedrock: 'bedrock',
};

/** Bedrock's frames are binary; these tests send them in base64 and the server decodes them. */
const frame = (b: Buffer): string => `b64:${b.toString('base64')}`;

const sse = (data: unknown, event?: string): string =>
  `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

/** Each provider's own wire form of the same situations. */
const WIRE: Record<
  Family,
  {
    start: string;
    content: string;
    overloaded: string;
    rateLimited: string;
    invalid: string;
    plainError: string;
  }
> = {
  openai: {
    start: '',
    content: sse({
      id: 'c1',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }],
    }),
    overloaded: sse({ error: { message: 'The server is overloaded', type: 'server_error', code: null } }),
    rateLimited: sse({ error: { message: 'Slow down', type: 'requests', code: 'rate_limit_exceeded' } }),
    invalid: sse({
      error: { message: 'Too long', type: 'invalid_request_error', code: 'context_length_exceeded' },
    }),
    plainError: 'event: error\ndata: something broke\n\n',
  },
  anthropic: {
    start: sse(
      { type: 'message_start', message: { id: 'm1', usage: { input_tokens: 5, output_tokens: 0 } } },
      'message_start',
    ),
    content: sse(
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      'content_block_delta',
    ),
    overloaded: sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'error'),
    rateLimited: sse({ type: 'error', error: { type: 'rate_limit_error', message: 'Slow down' } }, 'error'),
    invalid: sse({ type: 'error', error: { type: 'invalid_request_error', message: 'Too long' } }, 'error'),
    plainError: 'event: error\ndata: something broke\n\n',
  },
  gemini: {
    start: '',
    content: sse({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] } }] }),
    // No numeric code: the google.rpc status name decides.
    overloaded: sse({ error: { message: 'The model is overloaded.', status: 'UNAVAILABLE' } }),
    rateLimited: sse({ error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' } }),
    invalid: sse({ error: { code: 400, message: 'Too long', status: 'INVALID_ARGUMENT' } }),
    plainError: 'event: error\ndata: something broke\n\n',
  },
  cohere: {
    start: sse(
      { type: 'message-start', id: 'c1', delta: { message: { role: 'assistant' } } },
      'message-start',
    ),
    content: sse(
      { type: 'content-delta', index: 0, delta: { message: { content: { text: 'Hi' } } } },
      'content-delta',
    ),
    // Cohere reports mid-stream failures as an error event carrying the HTTP status.
    overloaded: sse({ message: 'The model is overloaded', status: 503 }, 'error'),
    rateLimited: sse({ message: 'Slow down', status: 429 }, 'error'),
    invalid: sse({ message: 'Too long', status: 400 }, 'error'),
    plainError: 'event: error\ndata: something broke\n\n',
  },
  bedrock: {
    start: frame(eventFrame('messageStart', '{"role":"assistant"}')),
    content: frame(eventFrame('contentBlockDelta', '{"contentBlockIndex":0,"delta":{"text":"Hi"}}')),
    overloaded: frame(exceptionFrame('serviceUnavailableException', '{"message":"Bedrock is overloaded"}')),
    rateLimited: frame(exceptionFrame('throttlingException', '{"message":"Slow down"}')),
    invalid: frame(exceptionFrame('validationException', '{"message":"Too long"}')),
    plainError: frame(exceptionFrame('internalServerException', 'something broke')),
  },
};

let server: Server;
let base: string;
/** Written one part at a time, so events before an error reach the adapter in their own read. */
let parts: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const part of parts) {
        res.write(part.startsWith('b64:') ? Buffer.from(part.slice(4), 'base64') : part);
        await new Promise((r) => setTimeout(r, 15));
      }
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await closeUpstreamPools();
  await new Promise<void>((r) => server.close(() => r()));
});

/** Streams one chat through the adapter; returns what arrived before the error, and the error. */
async function streamWith(type: ProviderType, ...wire: string[]) {
  parts = wire.filter((p) => p !== '');
  const target = makeTarget(type, base, 'm', {
    ...(type === 'azure-openai' ? { options: { apiVersion: '2024-10-21' } } : {}),
    ...(type === 'bedrock'
      ? { auth: { kind: 'aws', credentials: async () => ({ accessKeyId: 'AKIA', secretAccessKey: 's' }) } }
      : {}),
    ...(type === 'vertex-ai' ? { auth: { kind: 'bearer', token: async () => 'ya29.t' } } : {}),
  });
  const got: StreamEvent[] = [];
  const err = await failure(async () => {
    for await (const ev of getAdapter(type).stream(target, simpleChat(), {
      signal: new AbortController().signal,
    }))
      got.push(ev);
  });
  return { got, err };
}

describe.each(PROVIDER_TYPES.map((type) => ({ type })))('$type mid-stream errors', ({ type }) => {
  const w = WIRE[FAMILY[type]];

  it.each([
    ['before any content', ''],
    ['after content', 'content'],
  ] as const)('overloaded %s → UPSTREAM_STATUS 5xx, retryable, reported 502', async (_when, first) => {
    const { got, err } = await streamWith(type, w.start, first ? w.content : '', w.overloaded);
    expect(err.code).toBe('UPSTREAM_STATUS');
    expect(err.status).toBeGreaterThanOrEqual(500);
    expect(err.retryable).toBe(true);
    expect(err.httpStatus).toBe(502);
    expect(err.providerMessage).toMatch(/overloaded/i);
    expect(got.some((e) => e.type === 'delta' && e.content === 'Hi')).toBe(first === 'content');
  });

  it('rate limited → UPSTREAM_STATUS 429, retryable, reported 502', async () => {
    const { err } = await streamWith(type, w.start, w.rateLimited);
    expect({ code: err.code, status: err.status, retryable: err.retryable, http: err.httpStatus }).toEqual({
      code: 'UPSTREAM_STATUS',
      status: 429,
      retryable: true,
      http: 502,
    });
  });

  it('invalid request → UPSTREAM_STATUS 400, not retryable, reported 400', async () => {
    const { err } = await streamWith(type, w.start, w.content, w.invalid);
    expect({ code: err.code, status: err.status, retryable: err.retryable, http: err.httpStatus }).toEqual({
      code: 'UPSTREAM_STATUS',
      status: 400,
      retryable: false,
      http: 400,
    });
    expect(err.providerMessage).toBe('Too long');
  });

  it('an error event with a plain-text body → UPSTREAM_STATUS 5xx, retryable', async () => {
    const { err } = await streamWith(type, w.start, w.content, w.plainError);
    expect({ code: err.code, status: err.status, retryable: err.retryable }).toEqual({
      code: 'UPSTREAM_STATUS',
      // Bedrock's exception names its type (internalServerException: 500); SSE error events do not.
      status: type === 'bedrock' ? 500 : 502,
      retryable: true,
    });
    expect(err.providerMessage).toBe('something broke');
  });

  it('a stream that stops without an error or its final event → UPSTREAM_STREAM_CUT', async () => {
    const { got, err } = await streamWith(type, w.start, w.content);
    expect(err.code).toBe('UPSTREAM_STREAM_CUT');
    expect(err.retryable).toBe(true);
    expect(got.length).toBeGreaterThan(0);
  });
});
