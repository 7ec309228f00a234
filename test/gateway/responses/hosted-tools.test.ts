/**
 * Hosted tools (web_search, mcp, ...) on POST /v1/responses, end to end: a workflow that says nothing
 * refuses them with a 400 in the Responses error shape naming the tool; one whose hostedTools policy
 * omits them answers, names what it left out in x-service-omitted-tools and in the request log, and
 * sends the provider the other tools only (namespaced ones flat).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, NO_AI_SCOPE_KEY, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';
import { rawJson } from '../compat/helpers.ts';

let sim: Simulator;
let gw: RunningGateway;

beforeAll(async () => {
  sim = await startSimulator();
  gw = await startGateway([
    ...baseConfig(sim.url),
    workflow('plain', { provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('coder', {
      provider: 'claude',
      model: 'claude-haiku-4-5',
      hostedTools: { default: 'omit', tools: { mcp: 'refuse' } },
    }),
  ]);
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

const SHELL = { type: 'function', name: 'shell', parameters: { type: 'object', properties: {} } };
const AGENTS = {
  type: 'namespace',
  name: 'agents',
  description: 'Sub-agents',
  tools: [{ type: 'function', name: 'spawn', parameters: { type: 'object', properties: {} } }],
};

describe('hosted tools under a workflow policy', () => {
  it('refused by default: 400 in the Responses error shape, naming the tool; nothing sent upstream', async () => {
    sim.clearRequests();
    const r = await rawJson(gw.url, '/v1/responses', {
      body: { model: 'plain', input: 'hi', tools: [SHELL, { type: 'web_search' }] },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'unsupported_parameter',
        param: 'tools[1].type',
        message: expect.stringContaining('"web_search"'),
      },
    });
    expect(sim.requests()).toHaveLength(0);
  });

  it('omitted where the policy says so: named in the header and the request log; a refused one still 400s', async () => {
    sim.clearRequests();
    const r = await rawJson(gw.url, '/v1/responses', {
      body: {
        model: 'coder',
        input: 'hi',
        tool_choice: 'none',
        tools: [{ type: 'web_search' }, SHELL, AGENTS, { type: 'image_generation' }],
      },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('x-service-omitted-tools')).toBe('web_search,image_generation');
    const sent = sim.requests()[0]!.body as { tools: { name: string }[] };
    expect(sent.tools.map((t) => t.name)).toEqual(['shell', 'agents__spawn']);
    const id = r.headers.get('x-service-request-log-id')!;
    await gw.gateway.state.flush();
    const logs = await rawJson(gw.url, '/v1/request-logs?workflow=coder&limit=50', { key: NO_AI_SCOPE_KEY });
    const entry = (logs.json as { data: { request_log_id: string; details?: unknown }[] }).data.find(
      (e) => e.request_log_id === id,
    );
    expect(entry?.details).toMatchObject({ omitted_tools: ['web_search', 'image_generation'] });

    const streamed = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'coder',
        input: 'hi',
        stream: true,
        tools: [SHELL, { type: 'web_search' }],
      }),
    });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('x-service-omitted-tools')).toBe('web_search');
    expect(await streamed.text()).toContain('response.completed');

    const refused = await rawJson(gw.url, '/v1/responses', {
      body: {
        model: 'coder',
        input: 'hi',
        tools: [{ type: 'mcp', server_label: 'x', server_url: 'https://x' }],
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ error: { code: 'unsupported_parameter', param: 'tools[0].type' } });
  });
});
