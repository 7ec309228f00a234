/** Workflow selection rules (docs/api.md): workflow > model-as-workflow > provider+model direct. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { workflow } from '../../harness/manifests.ts';
import {
  type ChatCompletion,
  type Env,
  type ErrBody,
  post,
  startEnv,
  userMsg,
  type Wrapped,
} from './helpers.ts';

let env: Env;
beforeAll(async () => {
  env = await startEnv(() => [
    workflow('wf-a', { provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('wf-b', { provider: 'claude', model: 'claude-haiku-4-5' }),
    workflow('mixed-case', { name: 'Support-Bot', provider: 'gem', model: 'gemini-2.5-flash' }),
  ]);
});
afterAll(async () => env?.close());
beforeEach(() => env.sim.clearRequests());

const wrapped = (body: Record<string, unknown>) =>
  post<Wrapped<ChatCompletion>>(env.gw.url, { messages: userMsg(), format: 'wrapped', ...body });

describe('workflow selection', () => {
  it('workflow wins over model', async () => {
    const r = await wrapped({ workflow: 'wf-a', model: 'wf-b' });
    expect(r.status).toBe(200);
    expect(r.json.meta.workflow).toBe('wf-a');
    expect(r.json.meta.used_provider).toBe('oai');
    expect(r.json.meta.used_model).toBe('gpt-4o-mini');
    expect(env.sim.requests().map((q) => q.provider)).toEqual(['openai']);
  });

  it('model is read as the workflow name when workflow is absent', async () => {
    const r = await wrapped({ model: 'wf-b' });
    expect(r.status).toBe(200);
    expect(r.json.meta.workflow).toBe('wf-b');
    expect(r.json.meta.used_provider).toBe('claude');
    expect(r.json.meta.used_model).toBe('claude-haiku-4-5');
    expect(r.json.data.model).toBe('wf-b');
  });

  it('a model that names a workflow wins even when provider is sent too', async () => {
    const r = await wrapped({ model: 'wf-b', provider: 'oai' });
    expect(r.status).toBe(200);
    expect(r.json.meta.workflow).toBe('wf-b');
    expect(r.json.meta.used_provider).toBe('claude');
  });

  it('without a workflow, provider + model go direct and meta.workflow is null', async () => {
    const r = await wrapped({ provider: 'gem', model: 'gemini-2.5-flash' });
    expect(r.status).toBe(200);
    expect(r.json.meta.workflow).toBeNull();
    expect(r.json.meta.requested_provider).toBe('gem');
    expect(r.json.meta.requested_model).toBe('gemini-2.5-flash');
    expect(r.json.meta.used_provider).toBe('gem');
    expect(r.json.meta.used_model).toBe('gemini-2.5-flash');
    expect(r.json.backups).toEqual([]);
    const sent = env.sim.requests();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.provider).toBe('gemini');
    expect(sent[0]!.path).toContain('gemini-2.5-flash');
  });

  it('direct raw response: x-service-workflow is empty, used headers name the provider', async () => {
    const r = await post<ChatCompletion>(env.gw.url, {
      provider: 'oai',
      model: 'gpt-4o-mini',
      messages: userMsg(),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-service-workflow')).toBe('');
    expect(r.headers.get('x-service-used-provider')).toBe('oai');
    expect(r.json.object).toBe('chat.completion');
  });

  it('provider without model → 400 naming model', async () => {
    const r = await post<ErrBody>(env.gw.url, { provider: 'oai', messages: userMsg() });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe('invalid_request');
    expect(r.json.message).toMatch(/model/);
    expect(env.sim.requests()).toHaveLength(0);
  });

  it('neither workflow, model nor provider → 400', async () => {
    const r = await post<ErrBody>(env.gw.url, { messages: userMsg() });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe('invalid_request');
    expect(r.json.message).toMatch(/workflow/);
  });

  it('unknown workflow → 404 workflow_not_found', async () => {
    const r = await post<ErrBody>(env.gw.url, { workflow: 'no-such-wf', messages: userMsg() });
    expect(r.status).toBe(404);
    expect(r.json.error).toBe('workflow_not_found');
    expect(r.json.message).toContain('no-such-wf');
    const viaModel = await post<ErrBody>(env.gw.url, { model: 'no-such-wf', messages: userMsg() });
    expect(viaModel.status).toBe(404);
    expect(viaModel.json.error).toBe('workflow_not_found');
  });

  it('workflow names are matched case-sensitively', async () => {
    const exact = await wrapped({ workflow: 'Support-Bot' });
    expect(exact.status).toBe(200);
    expect(exact.json.meta.workflow).toBe('Support-Bot');
    for (const name of ['support-bot', 'SUPPORT-BOT', 'mixed-case', 'WF-A']) {
      const r = await post<ErrBody>(env.gw.url, { workflow: name, messages: userMsg() });
      expect(r.status, name).toBe(404);
      expect(r.json.error).toBe('workflow_not_found');
    }
  });

  it('a workflow overrides provider and model sent in the body', async () => {
    const r = await wrapped({ workflow: 'wf-a', provider: 'claude', model: 'claude-haiku-4-5' });
    expect(r.status).toBe(200);
    expect(r.json.meta.workflow).toBe('wf-a');
    expect(r.json.meta.requested_provider).toBe('oai');
    expect(r.json.meta.requested_model).toBe('gpt-4o-mini');
    expect(r.json.meta.used_provider).toBe('oai');
    const sent = env.sim.requests();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.provider).toBe('openai');
    expect((sent[0]!.body as { model: string }).model).toBe('gpt-4o-mini');
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    'direct route with model %s (an Object.prototype name) → 400, not a 5xx',
    async (model) => {
      const r = await post<ErrBody>(env.gw.url, { provider: 'oai', model, messages: userMsg() });
      expect(r.status).toBe(400);
      expect(r.json.error).toBe('invalid_request');
      expect(r.json.param).toBe('model');
      expect(env.sim.requests()).toHaveLength(0);
    },
  );

  it('direct route to an unconfigured provider or an unlisted model → 400', async () => {
    const p = await post<ErrBody>(env.gw.url, {
      provider: 'nope',
      model: 'gpt-4o-mini',
      messages: userMsg(),
    });
    expect(p.status).toBe(400);
    expect(p.json.param).toBe('provider');
    const m = await post<ErrBody>(env.gw.url, { provider: 'oai', model: 'gpt-99', messages: userMsg() });
    expect(m.status).toBe(400);
    expect(m.json.param).toBe('model');
    expect(env.sim.requests()).toHaveLength(0);
  });
});
