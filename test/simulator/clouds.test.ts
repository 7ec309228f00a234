/**
 * The simulator's Bedrock, Vertex AI and Cohere front doors refuse what the real services refuse:
 * a SigV4 signature over another body, a stale or unknown key, a missing or unissued bearer, a
 * Vertex content without a role, a Cohere call without a key. Its event-stream frames decode with
 * the AWS SDK's codec, and a corrupted CRC does not.
 */
import { EventStreamCodec } from '@smithy/core/event-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedHeaders } from '#gateway/providers/bedrock/sign';
import { makeTarget } from '../providers/helpers.ts';
import { eventFrame } from './bedrock/eventstream.ts';
import { type Simulator, startSimulator } from './index.ts';

const KEYS = { accessKeyId: 'AKIASIMTEST', secretAccessKey: 'secret/for+tests' };
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ aws: KEYS, apiKey: 'co-key' });
});
afterAll(() => sim.close());

const codec = new EventStreamCodec(
  (b) => Buffer.from(b).toString('utf8'),
  (s) => Buffer.from(s, 'utf8'),
);

describe('event-stream frames', () => {
  it('decode with the AWS SDK codec: headers and payload', () => {
    const msg = codec.decode(eventFrame('contentBlockDelta', '{"delta":{"text":"Hi"}}'));
    expect(msg.headers[':event-type']).toEqual({ type: 'string', value: 'contentBlockDelta' });
    expect(msg.headers[':message-type']).toEqual({ type: 'string', value: 'event' });
    expect(Buffer.from(msg.body).toString()).toBe('{"delta":{"text":"Hi"}}');
  });

  it('a corrupted CRC is caught by the codec', () => {
    expect(() => codec.decode(eventFrame('messageStop', '{}', true))).toThrow(/checksum/);
  });
});

describe('Bedrock SigV4', () => {
  const url = () => `${sim.url}/model/amazon.nova-lite-v1%3A0/converse`;
  const body = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] });
  const headersFor = (signedBody: string, creds = KEYS) =>
    signedHeaders(
      makeTarget('bedrock', sim.url, 'amazon.nova-lite-v1:0', {
        auth: { kind: 'aws', credentials: async () => creds },
        options: { region: 'us-east-1' },
      }),
      url(),
      signedBody,
      { 'content-type': 'application/json' },
      new AbortController().signal,
    );

  it('a correctly signed request passes', async () => {
    const res = await fetch(url(), { method: 'POST', headers: await headersFor(body), body });
    expect(res.status).toBe(200);
  });

  it('a signature over another body → 403 InvalidSignatureException (or the payload hash mismatch)', async () => {
    const res = await fetch(url(), {
      method: 'POST',
      headers: await headersFor(body.replace('hi', 'ho')),
      body,
    });
    expect([400, 403]).toContain(res.status);
    expect(res.headers.get('x-amzn-errortype')).toMatch(
      /^(InvalidSignatureException|XAmzContentSHA256Mismatch):/,
    );
  });

  it('an unknown access key → 403 UnrecognizedClientException; no signature → 403', async () => {
    const unknown = await fetch(url(), {
      method: 'POST',
      headers: await headersFor(body, { accessKeyId: 'AKIAOTHER', secretAccessKey: 'x' }),
      body,
    });
    expect([unknown.status, unknown.headers.get('x-amzn-errortype')?.split(':')[0]]).toEqual([
      403,
      'UnrecognizedClientException',
    ]);
    const none = await fetch(url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(none.status).toBe(403);
  });
});

describe('Vertex AI and Cohere front doors', () => {
  const vertex = (model: string, op: string) =>
    `${sim.url}/v1/projects/p/locations/us-central1/publishers/google/models/${model}:${op}`;

  it('Vertex: no bearer or an unissued one → 401 UNAUTHENTICATED', async () => {
    for (const headers of [{}, { authorization: 'Bearer ya29.made-up' }]) {
      const res = await fetch(vertex('gemini-2.5-flash', 'generateContent'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}',
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { status: string } }).error.status).toBe('UNAUTHENTICATED');
    }
  });

  it('Cohere: no key → 401 with its {id, message} body', async () => {
    const res = await fetch(`${sim.url}/v2/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"command-a-03-2025","messages":[{"role":"user","content":"hi"}]}',
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ message: 'no api key supplied' });
  });
});
