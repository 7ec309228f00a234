/**
 * Bedrock, Vertex AI and Cohere behind a real gateway, configured as Provider resources the way an
 * operator compiles them (Secrets, web identity, workload identity, endpoint overrides): failover
 * between them, usage and cost in the request log, and a model that cannot stream.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rawJson } from '../gateway/compat/helpers.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import {
  API_KEY,
  baseConfig,
  bedrockProvider,
  NO_AI_SCOPE_KEY,
  provider,
  SIM_AWS_KEYS,
  simGoogleAccount,
  vertexProvider,
  workflow,
} from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';

const WEB_TOKEN = 'eyJhbGciOiJSUzI1NiJ9.projected.sig';
const CLAUDE = 'anthropic.claude-3-5-haiku-20241022-v1:0';

let sim: Simulator;
let gw: RunningGateway;
let dir: string;

beforeAll(async () => {
  // The simulator stands in for STS (a local URL, a token file of the test's own).
  process.env.SWITCHYARD_CREDENTIAL_ENDPOINT_OVERRIDES = 'true';
  const google = simGoogleAccount();
  sim = await startSimulator({ aws: SIM_AWS_KEYS, google: google.sim, webIdentity: { token: WEB_TOKEN } });
  dir = await mkdtemp(join(tmpdir(), 'switchyard-irsa-'));
  await writeFile(join(dir, 'token'), WEB_TOKEN);
  const irsa = {
    apiVersion: 'switchyard.dev/v1alpha1',
    kind: 'Provider',
    metadata: { name: 'bed-irsa', namespace: 'team' },
    spec: {
      type: 'bedrock',
      region: 'eu-central-1',
      baseURL: sim.url,
      credentials: {
        webIdentity: { roleArn: 'arn:aws:iam::123456789012:role/gateway', tokenFile: join(dir, 'token') },
      },
      endpoints: { sts: `${sim.url}/sts` },
      models: [
        { name: 'amazon.nova-pro-v1:0', pricing: { inputUsdPerMTok: '0.8', outputUsdPerMTok: '3.2' } },
      ],
    },
  };
  const gke = {
    apiVersion: 'switchyard.dev/v1alpha1',
    kind: 'Provider',
    metadata: { name: 'vtx-gke', namespace: 'team' },
    spec: {
      type: 'vertex-ai',
      region: 'global',
      project: 'sim-project',
      baseURL: sim.url,
      credentials: { workloadIdentity: {} },
      endpoints: { metadata: sim.url },
      models: [{ name: 'gemini-2.5-pro' }],
    },
  };
  gw = await startGateway([
    ...baseConfig(sim.url, ['gpt-4o-mini']),
    ...bedrockProvider('bed', sim.url, [CLAUDE, 'anthropic.claude-v2-fail-503', 'meta.llama3-fail-429']),
    ...bedrockProvider('bed-nostream', sim.url, ['ai21.jamba-1-5-mini-v1:0'], {
      models: [
        {
          name: 'ai21.jamba-1-5-mini-v1:0',
          streaming: false,
          pricing: { inputUsdPerMTok: '1', outputUsdPerMTok: '2' },
        },
      ],
    }),
    ...vertexProvider('vtx', sim.url, ['gemini-2.5-flash', 'claude-haiku-4-5@20251001'], google.key(sim.url)),
    ...provider('coh', 'cohere', sim.url, ['command-a-03-2025', 'command-r-fail-500']),
    irsa,
    gke,
    workflow('bedrock-first', {
      provider: 'bed',
      model: 'anthropic.claude-v2-fail-503',
      backups: [
        { provider: 'coh', model: 'command-r-fail-500' },
        { provider: 'vtx', model: 'gemini-2.5-flash' },
      ],
    }),
    workflow('cohere-first', {
      provider: 'coh',
      model: 'command-r-fail-500',
      backups: [{ provider: 'bed', model: CLAUDE }],
    }),
    workflow('bedrock-throttled', {
      provider: 'bed',
      model: 'meta.llama3-fail-429',
      backups: [{ provider: 'vtx', model: 'claude-haiku-4-5@20251001' }],
    }),
    workflow('bedrock-chat', { provider: 'bed', model: CLAUDE }),
    workflow('no-stream', { provider: 'bed-nostream', model: 'ai21.jamba-1-5-mini-v1:0' }),
    workflow('irsa-chat', { provider: 'bed-irsa', model: 'amazon.nova-pro-v1:0' }),
    workflow('gke-chat', { provider: 'vtx-gke', model: 'gemini-2.5-pro' }),
  ]);
});
afterAll(async () => {
  delete process.env.SWITCHYARD_CREDENTIAL_ENDPOINT_OVERRIDES;
  await gw?.close();
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => sim.clearRequests());

const sdk = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEY, maxRetries: 0, timeout: 15_000 });
const upstream = () => sim.requests().filter((r) => r.provider !== 'google-auth' && r.provider !== 'aws-sts');

interface Wrapped {
  data: { choices: { message: { content: string } }[] } | null;
  meta: {
    status: string;
    used_provider: string;
    attempts: {
      provider: string;
      model: string;
      status: string;
      reason?: { status?: number; message: string };
    }[];
  };
}

describe('failover across the new providers', () => {
  it('Bedrock 503 → Cohere 500 → Vertex AI answers; every attempt is recorded', async () => {
    const res = await rawJson(gw.url, '/v1/ai', {
      body: {
        workflow: 'bedrock-first',
        format: 'wrapped',
        messages: [{ role: 'user', content: 'hello chain' }],
      },
    });
    expect(res.status).toBe(200);
    const body = res.json as Wrapped;
    expect(body.meta.status).toBe('success');
    expect(body.meta.used_provider).toBe('vtx');
    expect(body.data?.choices[0]?.message.content).toBe(
      'Simulated vertex-ai/gemini-2.5-flash reply: hello chain',
    );
    expect(body.meta.attempts.map((a) => [a.provider, a.status, a.reason?.status])).toEqual([
      ['bed', 'error', 503],
      ['coh', 'error', 500],
      ['vtx', 'success', undefined],
    ]);
    expect(upstream().map((r) => r.provider)).toEqual(['bedrock', 'cohere', 'vertex-ai']);
  });

  it('streamed: Cohere 500 before the first byte → Bedrock streams the answer', async () => {
    const stream = await sdk().chat.completions.create({
      model: 'cohere-first',
      messages: [{ role: 'user', content: 'stream over' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage?.total_tokens ?? usage;
    }
    expect(text).toBe(`Simulated bedrock/${CLAUDE} reply: stream over`);
    expect(usage).toBeGreaterThan(0);
    expect(upstream().map((r) => [r.provider, r.path.split('/').at(-1)])).toEqual([
      ['cohere', 'chat'],
      ['bedrock', 'converse-stream'],
    ]);
  });

  it('Bedrock throttling (429) → Claude on Vertex AI', async () => {
    const { data, response } = await sdk()
      .chat.completions.create({ model: 'bedrock-throttled', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(response.headers.get('x-service-used-provider')).toBe('vtx');
    expect(data.choices[0]?.message.content).toContain('Simulated vertex-ai/claude-haiku-4-5@20251001');
  });
});

describe('usage and cost', () => {
  it('a Bedrock answer is logged with its usage and its cost at the model price', async () => {
    const { data, response } = await sdk()
      .chat.completions.create({
        model: 'bedrock-chat',
        messages: [{ role: 'user', content: 'what does it cost' }],
      })
      .withResponse();
    const id = response.headers.get('x-service-request-log-id');
    const logs = await rawJson(gw.url, '/v1/request-logs?workflow=bedrock-chat&limit=5', {
      key: NO_AI_SCOPE_KEY,
    });
    expect(logs.status, logs.text).toBe(200);
    const entry = (
      logs.json as {
        data: { request_log_id: string; usage: typeof data.usage; cost_usd: string; used_provider: string }[];
      }
    ).data.find((e) => e.request_log_id === id)!;
    expect(entry.used_provider).toBe('bed');
    expect(entry.usage).toMatchObject({
      prompt_tokens: data.usage!.prompt_tokens,
      completion_tokens: data.usage!.completion_tokens,
    });
    // 1 $/MTok in, 2 $/MTok out, rounded up to the micro-dollar.
    const micros = Math.ceil(data.usage!.prompt_tokens + 2 * data.usage!.completion_tokens);
    expect(entry.cost_usd).toBe((micros / 1e6).toFixed(6).replace(/0{1,4}$/, ''));
  });
});

describe('credentials from the pod: web identity and workload identity', () => {
  it('a Bedrock provider with webIdentity signs with the keys STS issued for the projected token', async () => {
    const answer = await sdk().chat.completions.create({
      model: 'irsa-chat',
      messages: [{ role: 'user', content: 'irsa' }],
    });
    expect(answer.choices[0]?.message.content).toBe('Simulated bedrock/amazon.nova-pro-v1:0 reply: irsa');
    const sts = sim.requests().filter((r) => r.provider === 'aws-sts');
    expect(sts.length).toBeLessThanOrEqual(1); // at most once: the keys are kept for the next requests
    await sdk().chat.completions.create({
      model: 'irsa-chat',
      messages: [{ role: 'user', content: 'again' }],
    });
    expect(sim.requests().filter((r) => r.provider === 'aws-sts').length).toBe(sts.length);
  });

  it('a Vertex AI provider with workloadIdentity at location global uses the metadata server token', async () => {
    const answer = await sdk().chat.completions.create({
      model: 'gke-chat',
      messages: [{ role: 'user', content: 'gke' }],
    });
    expect(answer.choices[0]?.message.content).toBe('Simulated vertex-ai/gemini-2.5-pro reply: gke');
    expect(upstream().at(-1)?.path).toBe(
      '/v1/projects/sim-project/locations/global/publishers/google/models/gemini-2.5-pro:generateContent',
    );
  });
});

describe('a model that cannot stream (models[].streaming: false)', () => {
  it('a streamed request is answered as one content chunk from a non-streamed call', async () => {
    const stream = await sdk().chat.completions.create({
      model: 'no-stream',
      messages: [{ role: 'user', content: 'one piece please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const content = chunks.filter((c) => c.choices[0]?.delta.content);
    expect(content).toHaveLength(1);
    expect(content[0]!.choices[0]!.delta.content).toBe(
      'Simulated bedrock/ai21.jamba-1-5-mini-v1:0 reply: one piece please',
    );
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);
    // The provider was asked for a whole answer, never for a stream.
    expect(upstream().map((r) => r.path)).toEqual(['/model/ai21.jamba-1-5-mini-v1%3A0/converse']);
    console.log(`no-stream model: ${chunks.length} SSE chunks, ${content.length} with content`);
  });
});
