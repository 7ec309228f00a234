import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from './index.ts';
import { json, parseSse, post } from './test-helpers.ts';

let sim: Simulator;
const headers = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
const messages = [{ role: 'user', content: 'Hello Claude' }];
const send = (body: unknown, h: Record<string, string> = headers) => post(`${sim.url}/v1/messages`, body, h);

interface MessageBody {
  id: string;
  type: string;
  role: string;
  model: string;
  content: (
    | { type: 'text'; text: string }
    | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  )[];
  stop_reason: string;
  stop_sequence: string | null;
  usage: { input_tokens: number; output_tokens: number };
}
interface ErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

const weatherTool = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

describe('Anthropic messages', () => {
  it('answers with a message object', async () => {
    const res = await send({ model: 'claude-sonnet-4', max_tokens: 256, system: 'be brief', messages });
    expect(res.status).toBe(200);
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    const body = await json<MessageBody>(res);
    expect(body).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4',
      content: [{ type: 'text', text: 'Simulated anthropic/claude-sonnet-4 reply: Hello Claude' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
    });
    expect(body.id).toMatch(/^msg_/);
    expect(body.usage.output_tokens).toBe(
      Math.ceil('Simulated anthropic/claude-sonnet-4 reply: Hello Claude'.length / 4),
    );
  });

  it('streams the documented event sequence', async () => {
    const res = await send({ model: 'claude-sonnet-4', max_tokens: 256, messages, stream: true });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = parseSse(await res.text());
    const names = events.map((e) => e.event);
    expect(names.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'ping']);
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(names.filter((n) => n === 'content_block_delta')).toHaveLength(8);
    for (const e of events) expect((JSON.parse(e.data) as { type: string }).type).toBe(e.event);
    const text = events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => (JSON.parse(e.data) as { delta: { type: string; text: string } }).delta.text)
      .join('');
    expect(text).toBe('Simulated anthropic/claude-sonnet-4 reply: Hello Claude');
    const delta = JSON.parse(events.at(-2)!.data) as {
      delta: { stop_reason: string };
      usage: { output_tokens: number };
    };
    expect(delta.delta.stop_reason).toBe('end_turn');
    expect(delta.usage.output_tokens).toBeGreaterThan(0);
  });

  it('uses tools, streams input_json_delta, and answers text after a tool_result', async () => {
    const body = await json<MessageBody>(
      await send({ model: 'c', max_tokens: 100, messages, tools: [weatherTool] }),
    );
    expect(body.stop_reason).toBe('tool_use');
    const use = body.content[0]!;
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: expect.any(String) } });

    const events = parseSse(
      await (
        await send({ model: 'c', max_tokens: 100, messages, tools: [weatherTool], stream: true })
      ).text(),
    );
    const partial = events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => JSON.parse(e.data) as { delta: { type: string; partial_json: string } });
    expect(partial.every((d) => d.delta.type === 'input_json_delta')).toBe(true);
    expect(JSON.parse(partial.map((d) => d.delta.partial_json).join(''))).toEqual(
      (use as { input: unknown }).input,
    );

    const after = await json<MessageBody>(
      await send({
        model: 'c',
        max_tokens: 100,
        tools: [weatherTool],
        messages: [
          ...messages,
          { role: 'assistant', content: [use] },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: (use as { id: string }).id, content: '21C' }],
          },
        ],
      }),
    );
    expect(after.stop_reason).toBe('end_turn');
    const none = await json<MessageBody>(
      await send({
        model: 'c',
        max_tokens: 100,
        messages,
        tools: [weatherTool],
        tool_choice: { type: 'none' },
      }),
    );
    expect(none.content[0]!.type).toBe('text');
  });

  it('accepts image blocks and applies stop_sequences and max_tokens', async () => {
    const image = {
      role: 'user',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
        { type: 'text', text: 'describe' },
      ],
    };
    const stopped = await json<MessageBody>(
      await send({ model: 'c', max_tokens: 100, messages: [image], stop_sequences: ['reply'] }),
    );
    expect(stopped).toMatchObject({
      stop_reason: 'stop_sequence',
      stop_sequence: 'reply',
      content: [{ text: 'Simulated anthropic/c ' }],
    });
    const cut = await json<MessageBody>(await send({ model: 'c', max_tokens: 2, messages }));
    expect(cut.stop_reason).toBe('max_tokens');
    expect(cut.content[0]).toEqual({ type: 'text', text: 'Simulate' });
  });

  it('rejects a missing max_tokens and bad blocks with invalid_request_error', async () => {
    const res = await send({ model: 'c', messages });
    expect(res.status).toBe(400);
    expect(await json<ErrorBody>(res)).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: Field required' },
    });
    const badBlock = await json<ErrorBody>(
      await send({ model: 'c', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'text' }] }] }),
    );
    expect(badBlock.error.message).toMatch(/^messages\.0\.content/);
  });

  it('requires x-api-key and anthropic-version', async () => {
    const noKey = await send({ model: 'c', max_tokens: 5, messages }, { 'anthropic-version': '2023-06-01' });
    expect(noKey.status).toBe(401);
    expect(await json<ErrorBody>(noKey)).toMatchObject({
      type: 'error',
      error: { type: 'authentication_error' },
    });
    const noVersion = await send({ model: 'c', max_tokens: 5, messages }, { 'x-api-key': 'k' });
    expect(noVersion.status).toBe(400);
    expect((await json<ErrorBody>(noVersion)).error.message).toContain('anthropic-version');
  });

  it('sends overloaded_error with 529', async () => {
    const res = await send({ model: 'claude-fail-529', max_tokens: 5, messages });
    expect(res.status).toBe(529);
    expect(await json<ErrorBody>(res)).toMatchObject({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
  });
});
