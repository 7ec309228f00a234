import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSse, post } from '../gateway/native/helpers.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { apiKey, baseConfig, project } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { pricedProvider, spendCap, workflowOf } from './manifests.ts';

/**
 * A stream whose output outgrows its spend reservation extends it block by block; when the cap
 * refuses a block, the stream ends with an explicit budget error event (never a silent [DONE]).
 * The model declares maxOutputTokens 5, so each block is 5 tokens (10 µUSD at 2 $/MTok out), and
 * the simulator streams a reply of about 15 tokens in 40 chunks.
 */

const KEY = 'sy_live_StreamCapProjectKey0123456789abcd';
const MODEL = 'long-chunks-40';

function config(simUrl: string) {
  const small = pricedProvider('small', simUrl, MODEL, { in: 1, out: 2, maxOutputTokens: 5 });
  return [
    ...baseConfig(simUrl),
    ...small,
    project('streams'),
    ...apiKey('streams', KEY, { project: 'streams', scopes: ['ai', 'console'] }),
    workflowOf('streams', 'slot-capped', { provider: 'small', model: MODEL }),
    // The first reservation (~20 µUSD) and one block pass below 25 µUSD; the next block is refused.
    spendCap('slot-capped-primary', {
      project: 'streams',
      workflow: 'slot-capped',
      period: 'daily',
      limitUsd: '0.000025',
    }),
    workflowOf('streams', 'slot-capped-compat', { provider: 'small', model: MODEL }),
    spendCap('slot-capped-compat-primary', {
      project: 'streams',
      workflow: 'slot-capped-compat',
      period: 'daily',
      limitUsd: '0.000025',
    }),
    workflowOf('streams', 'roomy', { provider: 'small', model: MODEL }),
    spendCap('roomy-primary', { project: 'streams', workflow: 'roomy', period: 'daily', limitUsd: '1' }),
  ];
}

const ask = (url: string, workflow: string, compat: boolean) =>
  post(
    url,
    compat
      ? {
          model: workflow,
          stream: true,
          messages: [{ role: 'user', content: 'tell me a long story please' }],
        }
      : { workflow, stream: true, messages: [{ role: 'user', content: 'tell me a long story please' }] },
    { key: KEY, ...(compat ? { path: '/v1/chat/completions' } : {}) },
  );

describe('streams and spend reservations', () => {
  let sim: Simulator;
  let gw: RunningGateway;
  beforeAll(async () => {
    sim = await startSimulator();
    gw = await startGateway(config(sim.url));
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  it('a stream the cap cannot extend ends with a budget error event, on both surfaces', async () => {
    const message =
      'The stream was stopped: spend cap team/slot-capped-primary (daily, $0.000025) on primary is reached.';
    const native = parseSse((await ask(gw.url, 'slot-capped', false)).text);
    const last = native.at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data)).toEqual({
      error: { message, type: 'budget_exceeded', code: 'workflow_budget_exceeded', param: null },
    });
    expect(native.some((f) => f.data === '[DONE]')).toBe(false);
    const content = native.filter((f) => f.event === undefined && f.data.includes('"content"'));
    expect(content.length).toBeGreaterThan(0); // it did start

    // The stopped stream settled at what it had reserved (its usage never came): the cap is spent.
    const again = await ask(gw.url, 'slot-capped', true);
    expect(again.status).toBe(402);
    expect(JSON.parse(again.text).error.code).toBe('workflow_budget_exceeded');

    const compat = parseSse((await ask(gw.url, 'slot-capped-compat', true)).text);
    expect(JSON.parse(compat.at(-1)!.data)).toEqual({
      error: {
        message: message.replace('slot-capped-primary', 'slot-capped-compat-primary'),
        type: 'budget_exceeded',
        code: 'workflow_budget_exceeded',
        param: null,
      },
    });
    expect(compat.some((f) => f.data === '[DONE]')).toBe(false);
  });

  it('a stream that outgrows its reservation under a roomy cap is extended and completes', async () => {
    const frames = parseSse((await ask(gw.url, 'roomy', true)).text);
    expect(frames.at(-1)!.data).toBe('[DONE]');
    const text = frames
      .filter((f) => f.data.startsWith('{'))
      .map(
        (f) =>
          (JSON.parse(f.data) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ??
          '',
      )
      .join('');
    expect(text.length / 4).toBeGreaterThan(10); // two extensions past the first 5 tokens
  });
});
