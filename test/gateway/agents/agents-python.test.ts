/**
 * The OpenAI Agents SDK for Python (`openai-agents`, pinned in python/requirements.txt and installed
 * by `make test`'s prerequisites into .cache/py-agents) as its users run it: OPENAI_BASE_URL and
 * OPENAI_API_KEY set, nothing else. Two gateway processes on one Redis: the second turn of each run
 * goes to the other process, right after the first answer.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startRedis } from '#devkit/redis';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const PYTHON = resolve(ROOT, '.cache/py-agents/bin/python');
const SCRIPT = resolve(import.meta.dirname, 'python/agents_run.py');

let sim: Simulator;
let redis: Awaited<ReturnType<typeof startRedis>>;
let a: RunningGateway;
let b: RunningGateway;

beforeAll(async () => {
  sim = await startSimulator();
  redis = await startRedis();
  const manifests = [
    ...baseConfig(sim.url),
    workflow('agent-openai', { provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('agent-claude', { provider: 'claude', model: 'claude-haiku-4-5' }),
  ];
  a = await startGateway(manifests, { redisUrl: redis.url });
  b = await startGateway(manifests, { redisUrl: redis.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await redis?.stop();
  await sim?.close();
});

/** Runs one mode of agents_run.py against process `a` (the other process is `b`); its JSON line. */
function python(mode: string, model: string): Promise<unknown> {
  return new Promise((done, fail) => {
    execFile(
      PYTHON,
      [SCRIPT, mode, model],
      {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? '/tmp',
          OPENAI_BASE_URL: `${a.url}/v1`,
          OPENAI_API_KEY: API_KEY,
          OTHER_BASE_URL: `${b.url}/v1`,
        },
        timeout: 60_000,
      },
      (err, stdout, stderr) => {
        if (err) return fail(new Error(`agents_run.py ${mode} ${model}: ${err.message}\n${stderr}${stdout}`));
        const line = stdout.trim().split('\n').at(-1) ?? '';
        try {
          done(JSON.parse(line));
        } catch {
          fail(new Error(`agents_run.py ${mode} printed no JSON line:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

const sessionRun = z.object({
  conversation: z.string(),
  first: z.string(),
  second: z.string(),
  calls: z.array(z.string()),
  item_types: z.array(z.string()),
});
const backgroundRun = z.object({ id: z.string(), statuses: z.array(z.string()), output_text: z.string() });
const previousRun = z.object({
  first_response: z.string(),
  second_response: z.string(),
  second: z.string(),
  calls: z.array(z.string()),
});

describe('OpenAI Agents SDK for Python, default settings, one tool', () => {
  it.each(['agent-openai', 'agent-claude'])(
    'OpenAIConversationsSession through %s: the history lives in the gateway, the next turn continues on the other process',
    async (model) => {
      sim.clearRequests();
      const r = sessionRun.parse(await python('session', model));
      expect(r.conversation).toMatch(/^conv_/);
      expect(r.calls).toHaveLength(2);
      expect(r.first).toContain('Simulated');
      expect(r.second).toContain('Simulated');
      // Both runs' items: each a question, a call, its output and an answer.
      expect(r.item_types).toEqual([
        'message',
        'function_call',
        'function_call_output',
        'message',
        'message',
        'function_call',
        'function_call_output',
        'message',
      ]);
      // The second run's first model call carried the first run as history.
      const third = sim.requests()[2]!.body as { messages: unknown[] };
      expect(third.messages.length).toBeGreaterThanOrEqual(5);
      console.log(`python agents session (${model}): ${r.item_types.length} items in ${r.conversation}`);
    },
    90_000,
  );

  it('previous_response_id: the next turn continues on the other process', async () => {
    sim.clearRequests();
    const r = previousRun.parse(await python('previous', 'agent-openai'));
    expect(r.first_response).toMatch(/^resp_/);
    expect(r.second_response).not.toBe(r.first_response);
    expect(r.calls).toHaveLength(2);
    expect(r.second).toContain('Simulated');
    const third = sim.requests()[2]!.body as { messages: unknown[] };
    expect(third.messages.length).toBeGreaterThanOrEqual(5);
  }, 90_000);
});

describe('the official openai SDK for Python: background responses', () => {
  it('a background response polled to completion', async () => {
    const r = backgroundRun.parse(await python('background', 'agent-openai'));
    expect(r.statuses[0]).toBe('queued');
    expect(r.statuses.at(-1)).toBe('completed');
    expect(r.output_text).toContain('Simulated');
  }, 60_000);

  it('a background response cancelled while its provider call hangs', async () => {
    sim.addFault({ match: { provider: 'openai' }, hang: true, times: 1 });
    const r = backgroundRun.parse(await python('cancel', 'agent-openai'));
    expect(r.statuses).toEqual(['queued', 'cancelled']);
    expect(r.output_text).toBe('');
  }, 60_000);
});
