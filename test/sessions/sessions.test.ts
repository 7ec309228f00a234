import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { SUMMARY_PREFIX } from '#gateway/sessions/compose';
import { type ErrBody, parseSse, post, type Wrapped } from '../gateway/native/helpers.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, baseConfig, OTHER_KEY, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import {
  ADMIN_KEY,
  adminKeys,
  getJson,
  logs,
  OTHER_ADMIN_KEY,
  type SessionView,
  workflowIn,
} from './helpers.ts';

/**
 * Session memory end to end on both surfaces, through the provider simulator, on the memory and
 * the Redis adapters: ids on every channel (meta, header, SSE metadata, SDK withResponse), what the
 * provider receives, refusals, 20 concurrent turns, summarisation past the threshold, expiry.
 */

const T0 = Date.parse('2026-11-23T10:15:00.000Z');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function config(simUrl: string) {
  return [
    ...baseConfig(simUrl),
    ...adminKeys(),
    workflow('chat-mem', {
      provider: 'oai',
      model: 'gpt-4o-mini',
      systemInstructions: 'You are terse.',
      sessionMemory: { enabled: true, summarizeAtTokens: 1_000_000, ttlSeconds: 600 },
    }),
    workflow('chat-sum', {
      provider: 'oai',
      model: 'gpt-4o-mini',
      systemInstructions: 'Be brief.',
      sessionMemory: { enabled: true, summarizeAtTokens: 200 },
    }),
    workflow('chat-sum-test', {
      provider: 'claude',
      model: 'claude-haiku-4-5',
      testMode: true,
      sessionMemory: { enabled: true, summarizeAtTokens: 200 },
    }),
    workflow('plain', { provider: 'oai', model: 'gpt-4o-mini' }),
    workflowIn('other', 'other-chat-mem', {
      name: 'chat-mem',
      provider: 'oai',
      model: 'gpt-4o-mini',
      sessionMemory: { enabled: true },
    }),
  ];
}

type Msg = { role: string; content: unknown; tool_calls?: unknown[] };
const asMessages = (v: SessionView): Msg[] =>
  v.turns.map((t) => ({
    role: t.role,
    content: t.content,
    ...(t.tool_calls ? { tool_calls: t.tool_calls } : {}),
  }));

for (const backend of ['memory', 'redis'] as const) {
  describe(`session memory (${backend} state)`, () => {
    let sim: Simulator;
    let gw: RunningGateway;
    let redis: RunningRedis | undefined;
    let clock = T0;
    const sdk = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEY, maxRetries: 0 });
    const view = async (id: string, key = ADMIN_KEY) => {
      await gw.gateway.sessionWorkDone();
      await gw.gateway.state.flush();
      return getJson<SessionView>(gw.url, `/v1/sessions/${id}`, key);
    };
    const upstreamMessages = (): Msg[][] =>
      sim
        .requests()
        .filter((r) => r.path.endsWith('/chat/completions'))
        .map((r) => (r.body as { messages: Msg[] }).messages);

    beforeAll(async () => {
      sim = await startSimulator();
      if (backend === 'redis') redis = await startRedis();
      const url = redis?.url;
      gw = await startGateway(config(sim.url), {
        // Every read of the clock moves it by 1 ms: request-log entries never share a timestamp.
        now: () => clock++,
        redisUrl: url,
      });
    });
    afterAll(async () => {
      await gw?.close();
      await sim?.close();
      await redis?.stop();
    });

    it('starts a session (meta, header) and the provider then sees instructions + turns + new message', async () => {
      const a = await post<Wrapped>(gw.url, {
        workflow: 'chat-mem',
        format: 'wrapped',
        messages: [{ role: 'user', content: 'My name is Ada.' }],
      });
      expect(a.status).toBe(200);
      const id = a.json.meta.session_id!;
      expect(id).toMatch(UUID);
      const firstAnswer = (a.json.data as { choices: { message: { content: string } }[] }).choices[0]!.message
        .content;

      sim.clearRequests();
      const b = await post(gw.url, {
        workflow: 'chat-mem',
        session_id: id,
        messages: [{ role: 'user', content: 'What is my name?' }],
      });
      expect(b.status).toBe(200);
      // format raw (the default): the id comes back in the header.
      expect(b.headers.get('x-service-session-id')).toBe(id);
      expect(upstreamMessages()).toEqual([
        [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'My name is Ada.' },
          { role: 'assistant', content: firstAnswer },
          { role: 'user', content: 'What is my name?' },
        ],
      ]);
      const v = await view(id);
      expect(v.status).toBe(200);
      expect(v.json).toMatchObject({
        object: 'session',
        id,
        workflow: 'chat-mem',
        summary: null,
        summary_version: 0,
        folded_turns: 0,
      });
      expect(asMessages(v.json).map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
      expect(v.json.turns.every((t) => t.tokens > 0)).toBe(true);
      // The request log carries the session id.
      const entries = await logs(gw.url, `session_id=${id}`);
      expect(entries.map((e) => e.type)).toEqual(['request', 'request']);
    });

    it('native stream: the first SSE metadata event carries the new session id', async () => {
      const res = await fetch(`${gw.url}/v1/ai`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          workflow: 'chat-mem',
          stream: true,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      });
      const frames = parseSse(await res.text());
      expect(frames[0]!.event).toBe('metadata');
      const id = (JSON.parse(frames[0]!.data) as { session_id: string }).session_id;
      expect(id).toMatch(UUID);
      expect(res.headers.get('x-service-session-id')).toBe(id);
      const meta = frames.find((f) => f.event === 'meta')!;
      expect((JSON.parse(meta.data) as { session_id: string }).session_id).toBe(id);
      const v = await view(id);
      expect(asMessages(v.json)[0]).toEqual({ role: 'user', content: 'hi' });
      expect(v.json.turns[1]!.content).toMatch(/^Simulated openai\/gpt-4o-mini reply: hi/);
    });

    it('compatible surface: the official SDK reads x-service-session-id through withResponse()', async () => {
      const first = await sdk()
        .chat.completions.create({ model: 'chat-mem', messages: [{ role: 'user', content: 'Remember 42.' }] })
        .withResponse();
      const id = first.response.headers.get('x-service-session-id')!;
      expect(id).toMatch(UUID);
      sim.clearRequests();
      const second = await sdk()
        .chat.completions.create({
          model: 'chat-mem',
          messages: [{ role: 'user', content: 'Which number?' }],
          session_id: id,
        } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse();
      expect(second.response.headers.get('x-service-session-id')).toBe(id);
      expect(upstreamMessages()[0]).toEqual([
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Remember 42.' },
        { role: 'assistant', content: first.data.choices[0]!.message.content },
        { role: 'user', content: 'Which number?' },
      ]);
      // Compatible SSE continues the same session.
      const stream = await sdk().chat.completions.create({
        model: 'chat-mem',
        stream: true,
        messages: [{ role: 'user', content: 'Again?' }],
        session_id: id,
      } as OpenAI.ChatCompletionCreateParamsStreaming);
      for await (const _ of stream) void _;
      const v = await view(id);
      expect(v.json.turns).toHaveLength(6);
    });

    describe('refusals', () => {
      const unknown = '3f2b8c1e-9d4a-4f6b-8e2c-1a2b3c4d5e6f';
      it.each([
        ['unknown', unknown],
        ['malformed', 'not-a-uuid'],
      ])(
        '%s session_id → 422 session_not_found on both surfaces, no provider call',
        async (_w, sessionId) => {
          sim.clearRequests();
          const n = await post<ErrBody>(gw.url, {
            workflow: 'chat-mem',
            session_id: sessionId,
            messages: [{ role: 'user', content: 'x' }],
          });
          expect(n.status).toBe(422);
          expect(n.json).toMatchObject({ error: 'session_not_found', param: 'session_id' });
          expect(n.json.message).toContain(sessionId);
          expect(n.json.hint).toBeTruthy();
          const err = await sdk()
            .chat.completions.create({
              model: 'chat-mem',
              messages: [{ role: 'user', content: 'x' }],
              session_id: sessionId,
            } as OpenAI.ChatCompletionCreateParamsNonStreaming)
            .catch((e: unknown) => e);
          expect(err).toBeInstanceOf(OpenAI.UnprocessableEntityError);
          const e = err as InstanceType<typeof OpenAI.UnprocessableEntityError>;
          expect(e.status).toBe(422);
          expect(e.error).toMatchObject({
            type: 'invalid_request_error',
            code: 'session_not_found',
            param: 'session_id',
          });
          expect(upstreamMessages()).toEqual([]);
        },
      );

      it("another project's session is unknown (422, same message), and 404 on the console read", async () => {
        const mine = await post<Wrapped>(gw.url, {
          workflow: 'chat-mem',
          format: 'wrapped',
          messages: [{ role: 'user', content: 'secret' }],
        });
        const id = mine.json.meta.session_id!;
        const foreign = await post<ErrBody>(
          gw.url,
          { workflow: 'chat-mem', session_id: id, messages: [{ role: 'user', content: 'x' }] },
          { key: OTHER_KEY },
        );
        expect(foreign.status).toBe(422);
        expect(foreign.json).toEqual({
          error: 'session_not_found',
          message: `Session "${id}" does not exist in this project.`,
          hint: expect.any(String),
          param: 'session_id',
        });
        expect((await view(id, OTHER_ADMIN_KEY)).status).toBe(404);
        expect((await getJson(gw.url, '/v1/sessions/not-a-uuid')).status).toBe(404);
        // An ai-only key cannot read sessions.
        expect((await getJson(gw.url, `/v1/sessions/${id}`, API_KEY)).status).toBe(403);
      });

      it('session_id for a workflow without session memory → 400 on both surfaces', async () => {
        const sessionId = '3f2b8c1e-9d4a-4f6b-8e2c-1a2b3c4d5e6f';
        const n = await post<ErrBody>(gw.url, {
          workflow: 'plain',
          session_id: sessionId,
          messages: [{ role: 'user', content: 'x' }],
        });
        expect(n.status).toBe(400);
        expect(n.json).toMatchObject({ error: 'invalid_request', param: 'session_id' });
        expect(n.json.message).toMatch(/Workflow "plain" has no session memory/);
        const err = await sdk()
          .chat.completions.create({
            model: 'plain',
            messages: [{ role: 'user', content: 'x' }],
            session_id: sessionId,
          } as OpenAI.ChatCompletionCreateParamsNonStreaming)
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(OpenAI.BadRequestError);
        expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
          param: 'session_id',
        });
        // Without session_id a plain workflow has no session at all.
        const p = await post<Wrapped>(gw.url, {
          workflow: 'plain',
          format: 'wrapped',
          messages: [{ role: 'user', content: 'x' }],
        });
        expect(p.json.meta.session_id).toBeUndefined();
        expect(p.headers.get('x-service-session-id')).toBeNull();
      });
    });

    it('20 concurrent requests on one session end with 40 turns, each answer next to its question', async () => {
      const start = await post<Wrapped>(gw.url, {
        workflow: 'chat-mem',
        format: 'wrapped',
        messages: [{ role: 'user', content: 'opening' }],
      });
      const id = start.json.meta.session_id!;
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          post(gw.url, {
            workflow: 'chat-mem',
            session_id: id,
            messages: [{ role: 'user', content: `q${i}` }],
          }),
        ),
      );
      expect(replies.map((r) => r.status)).toEqual(Array(20).fill(200));
      const v = await view(id);
      // 2 opening turns + 20 × (question, answer).
      expect(v.json.turns).toHaveLength(42);
      const seen = new Set<string>();
      for (let i = 2; i < 42; i += 2) {
        const q = v.json.turns[i]!;
        const a = v.json.turns[i + 1]!;
        expect(q.role).toBe('user');
        expect(a.role).toBe('assistant');
        expect(a.content).toBe(`Simulated openai/gpt-4o-mini reply: ${q.content as string}`);
        seen.add(q.content as string);
      }
      expect(seen.size).toBe(20);
    });

    it('a 10-turn conversation crosses the threshold: the provider then receives summary + kept turns', async () => {
      const say = (i: number) =>
        `Turn ${i}: please remember that item number ${i} costs ${i * 7} dollars and ships from warehouse ${i}.`;
      let id: string | undefined;
      let before: SessionView | undefined;
      for (let i = 1; i <= 10; i++) {
        if (i === 10) before = (await view(id!)).json;
        sim.clearRequests();
        const r = await post<Wrapped>(gw.url, {
          workflow: 'chat-sum',
          format: 'wrapped',
          ...(id ? { session_id: id } : {}),
          messages: [{ role: 'user', content: say(i) }],
        });
        expect(r.status).toBe(200);
        id ??= r.json.meta.session_id!;
        if (i === 10) {
          // The exact upstream body of the 10th turn: instructions, summary, first exchange, kept turns, new message.
          const [main] = upstreamMessages();
          expect(main).toEqual([
            { role: 'system', content: 'Be brief.' },
            { role: 'system', content: SUMMARY_PREFIX + before!.summary },
            ...asMessages(before!),
            { role: 'user', content: say(10) },
          ]);
        }
      }
      const v = before!;
      expect(v.summary_version).toBeGreaterThanOrEqual(1);
      expect(v.folded_turns).toBeGreaterThan(0);
      // The first exchange stays verbatim; the latest turns too; the middle is folded.
      expect(asMessages(v).slice(0, 2)).toEqual([
        { role: 'user', content: say(1) },
        { role: 'assistant', content: `Simulated openai/gpt-4o-mini reply: ${say(1).slice(0, 40)}` },
      ]);
      expect(asMessages(v).at(-2)).toEqual({ role: 'user', content: say(9) });
      expect(v.turns.length + v.folded_turns).toBe(18);
      // Written by the workflow's own model (the simulator's deterministic reply to the summary prompt).
      expect(v.summary).toMatch(/^Simulated openai\/gpt-4o-mini reply: (Summary so far:|New turns:)/);
      const final = (await view(id!)).json;
      const summaries = await logs(gw.url, `session_id=${id}&type=session_summary`);
      expect(summaries.length).toBe(final.summary_version);
      for (const s of summaries) {
        expect(s).toMatchObject({
          status: 'success',
          workflow: 'chat-sum',
          used_model: 'gpt-4o-mini',
          test_mode: false,
        });
        expect(s.usage!.total_tokens).toBeGreaterThan(0);
        expect(Number(s.cost_usd)).toBeGreaterThan(0);
      }
      // The summary call went to the provider: its prompt carries the folded turns.
      const usage = await getJson<{ data: { workflow: string; requests: number }[] }>(
        gw.url,
        `/v1/usage?from=${T0 - 3_600_000}&to=${T0 + 3_600_000}`,
      );
      const row = usage.json.data.find((r) => r.workflow === 'chat-sum')!;
      expect(row.requests).toBe(10 + summaries.length);
    });

    it('test mode summarises deterministically, at zero cost', async () => {
      const converse = async () => {
        let id: string | undefined;
        for (let i = 1; i <= 8; i++) {
          const r = await post<Wrapped>(gw.url, {
            workflow: 'chat-sum-test',
            format: 'wrapped',
            ...(id ? { session_id: id } : {}),
            messages: [
              { role: 'user', content: `Test-mode turn ${i} with enough words to count for something here.` },
            ],
          });
          id ??= r.json.meta.session_id!;
          await view(id);
        }
        return { id: id!, v: (await view(id!)).json };
      };
      const one = await converse();
      const two = await converse();
      expect(one.v.summary_version).toBeGreaterThanOrEqual(1);
      expect(two.v.summary).toBe(one.v.summary);
      expect(asMessages(two.v)).toEqual(asMessages(one.v));
      for (const line of one.v.summary!.split('\n')) expect(line).toMatch(/^(user|assistant): ./);
      const summaries = await logs(gw.url, `session_id=${one.id}&type=session_summary`);
      expect(summaries.length).toBe(one.v.summary_version);
      expect(summaries.every((s) => Number(s.cost_usd) === 0 && s.test_mode)).toBe(true);
    });

    it('a failed summary keeps every turn and is reported in the request log', async () => {
      let id: string | undefined;
      const say = (i: number) => `Failure turn ${i}: the quick brown fox jumps over the lazy dog, twice.`;
      for (let i = 1; i <= 3; i++) {
        const r = await post<Wrapped>(gw.url, {
          workflow: 'chat-sum',
          format: 'wrapped',
          ...(id ? { session_id: id } : {}),
          messages: [{ role: 'user', content: say(i) }],
        });
        id ??= r.json.meta.session_id!;
        await view(id);
      }
      const before = (await view(id!)).json;
      expect(before.summary_version).toBe(0);
      // The next turn crosses the threshold: its own call passes, the summary call after it fails.
      sim.addFault({ match: { provider: 'openai' }, delayMs: 0, times: 1 });
      sim.addFault({ match: { provider: 'openai' }, status: 503, times: 1 });
      await post(gw.url, {
        workflow: 'chat-sum',
        session_id: id,
        messages: [{ role: 'user', content: say(4) }],
      });
      const after = (await view(id!)).json;
      sim.clearFaults();
      expect(after.summary_version).toBe(0);
      expect(after.turns).toHaveLength(8);
      const [failed] = await logs(gw.url, `session_id=${id}&type=session_summary`);
      expect(failed).toMatchObject({ status: 'error', outcome: 'upstream_error', usage: null });
      expect(failed!.details).toMatchObject({ applied: false, folded_turns: 0, kept_turns: 8 });
    });

    it("a session the estimates put under the threshold is summarised on the provider's reported usage", async () => {
      // Two sessions, the same four short exchanges; in the second the provider reports 5,000
      // prompt tokens for the fourth (a tokenizer that counts far more than the estimate).
      const converse = async (inflate: boolean): Promise<SessionView> => {
        let id: string | undefined;
        for (let i = 1; i <= 4; i++) {
          if (inflate && i === 4)
            sim.addFault({ match: { provider: 'openai' }, promptTokens: 5000, times: 1 });
          const r = await post<Wrapped>(gw.url, {
            workflow: 'chat-sum',
            format: 'wrapped',
            ...(id ? { session_id: id } : {}),
            messages: [{ role: 'user', content: `Turn ${i}.` }],
          });
          expect(r.status).toBe(200);
          id ??= r.json.meta.session_id!;
          await view(id);
        }
        return (await view(id!)).json;
      };
      const estimated = await converse(false);
      const reported = await converse(true);
      sim.clearFaults();
      console.log(
        `sessions: 4 exchanges, estimated ${estimated.tokens} tokens against a threshold of 200: summary_version ${estimated.summary_version}; with 5,000 reported prompt tokens: summary_version ${reported.summary_version}, ${reported.turns.length} turns kept`,
      );
      expect(estimated.summary_version).toBe(0);
      expect(estimated.turns).toHaveLength(8);
      expect(reported.summary_version).toBe(1);
      expect(reported.turns.length).toBeLessThan(8);
    });

    it('expires after ttlSeconds idle; each use restarts the idle timer', async () => {
      const r = await post<Wrapped>(gw.url, {
        workflow: 'chat-mem',
        format: 'wrapped',
        messages: [{ role: 'user', content: 'short-lived' }],
      });
      const id = r.json.meta.session_id!;
      await gw.gateway.sessionWorkDone();
      if (backend === 'redis') {
        // Redis expires on its own clock: the keys carry the workflow's idle TTL (600 s).
        const { Redis } = await import('ioredis');
        const c = new Redis(redis!.url);
        const ttl = await c.pttl(`switchyard:{p:team.app}:session:${id}`);
        const turnsTtl = await c.pttl(`switchyard:{p:team.app}:session:${id}:turns`);
        c.disconnect();
        expect(ttl).toBeGreaterThan(590_000);
        expect(ttl).toBeLessThanOrEqual(600_000);
        expect(turnsTtl).toBeGreaterThan(590_000);
        return;
      }
      clock += 599_000;
      const kept = await post(gw.url, {
        workflow: 'chat-mem',
        session_id: id,
        messages: [{ role: 'user', content: 'still here' }],
      });
      expect(kept.status).toBe(200);
      clock += 599_000;
      expect((await view(id)).status).toBe(200);
      clock += 2_000;
      const gone = await post<ErrBody>(gw.url, {
        workflow: 'chat-mem',
        session_id: id,
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(gone.status).toBe(422);
      expect(gone.json.error).toBe('session_not_found');
    });

    it('exports sessions started, active and summarisations as metrics', async () => {
      const text = await (await fetch(`${gw.metricsUrl}/metrics`)).text();
      expect(text).toMatch(/switchyard_sessions_started_total\{project="team.app",workflow="chat-mem"\} \d+/);
      expect(text).toMatch(/switchyard_sessions_active\{project="team.app"\} [1-9]\d*/);
      expect(text).toMatch(
        /switchyard_session_summaries_total\{project="team.app",workflow="chat-sum",outcome="success"\} [1-9]/,
      );
      expect(text).toMatch(/switchyard_session_summaries_total\{[^}]*outcome="error"\} 1/);
    });
  });
}
