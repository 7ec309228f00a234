import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from './index.ts';
import { json, jsonEvents, post } from './test-helpers.ts';

let sim: Simulator;
const key = { 'api-key': 'azure-key' };
const messages = [{ role: 'user', content: 'Hello Azure' }];
const deployment = (op: string, version = '2024-10-21') =>
  `${sim.url}/openai/deployments/my-gpt4o/${op}${version ? `?api-version=${version}` : ''}`;

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

describe('Azure OpenAI', () => {
  it('answers chat with the deployment as model and content-filter annotations', async () => {
    const res = await post(deployment('chat/completions'), { messages }, key);
    expect(res.status).toBe(200);
    const body = await json<{
      model: string;
      choices: { message: { content: string }; content_filter_results: unknown }[];
      prompt_filter_results: unknown[];
    }>(res);
    expect(body.model).toBe('my-gpt4o');
    expect(body.choices[0]!.message.content).toBe('Simulated azure-openai/my-gpt4o reply: Hello Azure');
    expect(body.choices[0]!.content_filter_results).toBeDefined();
    expect(body.prompt_filter_results).toHaveLength(1);
    expect(sim.requests().at(-1)).toMatchObject({
      provider: 'azure-openai',
      headers: { 'api-key': '<redacted>' },
    });
  });

  it('streams, starting with the empty-choices prompt-filter chunk', async () => {
    const text = await (await post(deployment('chat/completions'), { messages, stream: true }, key)).text();
    const chunks = jsonEvents(text) as {
      choices: { delta: { content?: string } }[];
      prompt_filter_results?: unknown;
    }[];
    expect(chunks[0]!.choices).toEqual([]);
    expect(chunks[0]!.prompt_filter_results).toBeDefined();
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(
      'Simulated azure-openai/my-gpt4o reply: Hello Azure',
    );
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('serves embeddings', async () => {
    const body = await json<{ data: { embedding: number[] }[]; model: string }>(
      await post(deployment('embeddings'), { input: ['a', 'b'] }, key),
    );
    expect(body.data).toHaveLength(2);
    expect(body.model).toBe('my-gpt4o');
  });

  it('requires api-version and an api-key', async () => {
    const noVersion = await post(deployment('chat/completions', ''), { messages }, key);
    expect(noVersion.status).toBe(404);
    expect(await noVersion.json()).toEqual({ error: { code: '404', message: 'Resource not found' } });
    const noKey = await post(deployment('chat/completions'), { messages });
    expect(noKey.status).toBe(401);
    expect(await json<{ error: { code: string; message: string } }>(noKey)).toMatchObject({
      error: { code: '401', message: expect.stringContaining('Access denied') },
    });
  });

  it('validates bodies with the OpenAI error shape and maps injected 429s to Azure bodies', async () => {
    const bad = await post(deployment('chat/completions'), { messages: 'hi' }, key);
    expect(bad.status).toBe(400);
    expect(await json<{ error: { param: string } }>(bad)).toMatchObject({ error: { param: 'messages' } });
    sim.addFault({ match: { provider: 'azure-openai' }, status: 429, retryAfter: 1, times: 1 });
    const limited = await post(deployment('chat/completions'), { messages }, key);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(await json<{ error: { code: string } }>(limited)).toMatchObject({ error: { code: '429' } });
  });
});
