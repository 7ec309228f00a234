import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from './index.ts';
import { json, post, schemaErrors } from './test-helpers.ts';

let sim: Simulator;
const key = { 'x-goog-api-key': 'AIza-test' };
const contents = [{ role: 'user', parts: [{ text: 'Hello Gemini' }] }];
const model = (m: string, method: string, query = '') => `${sim.url}/v1beta/models/${m}:${method}${query}`;

interface GenerateBody {
  candidates: {
    content: {
      role: string;
      parts: ({ text: string } | { functionCall: { name: string; args: Record<string, unknown> } })[];
    };
    finishReason?: string;
    index: number;
  }[];
  usageMetadata: { promptTokenCount: number; candidatesTokenCount?: number; totalTokenCount: number };
  modelVersion: string;
}
interface GoogleError {
  error: { code: number; message: string; status: string };
}

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

describe('Gemini', () => {
  it('generates content', async () => {
    const res = await post(
      model('gemini-2.0-flash', 'generateContent'),
      { contents, systemInstruction: { parts: [{ text: 'brief' }] } },
      key,
    );
    expect(res.status).toBe(200);
    const body = await json<GenerateBody>(res);
    expect(body.candidates[0]).toEqual({
      content: { role: 'model', parts: [{ text: 'Simulated gemini/gemini-2.0-flash reply: Hello Gemini' }] },
      finishReason: 'STOP',
      index: 0,
    });
    expect(body.modelVersion).toBe('gemini-2.0-flash');
    const u = body.usageMetadata;
    expect(u.totalTokenCount).toBe(u.promptTokenCount + u.candidatesTokenCount!);
  });

  it('streams with alt=sse using CRLF framing, finishReason on the last event', async () => {
    const res = await post(model('gemini-2.0-flash', 'streamGenerateContent', '?alt=sse'), { contents }, key);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    expect(text).toContain('\r\n\r\n');
    const events = text
      .split('\r\n\r\n')
      .filter(Boolean)
      .map((e) => JSON.parse(e.replace(/^data: /, '')) as GenerateBody);
    expect(events).toHaveLength(8);
    expect(events.map((e) => (e.candidates[0]!.content.parts[0] as { text: string }).text).join('')).toBe(
      'Simulated gemini/gemini-2.0-flash reply: Hello Gemini',
    );
    expect(events.at(-1)!.candidates[0]!.finishReason).toBe('STOP');
    expect(events[0]!.candidates[0]!.finishReason).toBeUndefined();
  });

  it('streams a JSON array without alt=sse', async () => {
    const res = await post(model('gemini-2.0-flash', 'streamGenerateContent'), { contents }, key);
    const body = JSON.parse(await res.text()) as GenerateBody[];
    expect(body).toHaveLength(8);
  });

  it('calls functions and honours mode NONE', async () => {
    const tools = [
      {
        functionDeclarations: [
          {
            name: 'find_book',
            parameters: {
              type: 'OBJECT',
              properties: { title: { type: 'STRING' }, year: { type: 'INTEGER', minimum: 1900 } },
              required: ['title'],
            },
          },
        ],
      },
    ];
    const body = await json<GenerateBody>(
      await post(model('gemini-2.5-pro', 'generateContent'), { contents, tools }, key),
    );
    const part = body.candidates[0]!.content.parts[0] as {
      functionCall: { name: string; args: { title: string; year: number } };
    };
    expect(part.functionCall.name).toBe('find_book');
    expect(typeof part.functionCall.args.title).toBe('string');
    // The OpenAPI-style bound (upper-case types) is honoured, also above the faker's default range.
    expect(Number.isInteger(part.functionCall.args.year)).toBe(true);
    expect(part.functionCall.args.year).toBeGreaterThanOrEqual(1900);

    const none = await json<GenerateBody>(
      await post(
        model('gemini-2.5-pro', 'generateContent'),
        { contents, tools, toolConfig: { functionCallingConfig: { mode: 'NONE' } } },
        key,
      ),
    );
    expect(none.candidates[0]!.content.parts[0]).toHaveProperty('text');

    const after = await json<GenerateBody>(
      await post(
        model('gemini-2.5-pro', 'generateContent'),
        {
          tools,
          contents: [
            ...contents,
            { role: 'model', parts: [part] },
            { role: 'user', parts: [{ functionResponse: { name: 'find_book', response: { ok: true } } }] },
          ],
        },
        key,
      ),
    );
    expect(after.candidates[0]!.content.parts[0]).toHaveProperty('text');
  });

  it('answers JSON conforming to responseSchema / responseJsonSchema', async () => {
    const responseJsonSchema = {
      type: 'array',
      minItems: 2,
      items: {
        type: 'object',
        properties: { id: { type: 'string', format: 'uuid' } },
        required: ['id'],
      },
    };
    const body = await json<GenerateBody>(
      await post(
        model('gemini-2.5-flash', 'generateContent'),
        { contents, generationConfig: { responseMimeType: 'application/json', responseJsonSchema } },
        key,
      ),
    );
    const parsed = JSON.parse((body.candidates[0]!.content.parts[0] as { text: string }).text) as unknown;
    expect(schemaErrors(responseJsonSchema, parsed)).toEqual([]);

    // Gemini's own dialect: upper-case types, nullable, int64 bounds as strings.
    const responseSchema = {
      type: 'OBJECT',
      properties: {
        name: { type: 'STRING' },
        nick: { type: 'STRING', nullable: true },
        scores: { type: 'ARRAY', minItems: '3', maxItems: '3', items: { type: 'NUMBER', minimum: 5000 } },
      },
      required: ['name', 'nick', 'scores'],
    };
    const dialect = await json<GenerateBody>(
      await post(
        model('gemini-2.5-flash', 'generateContent'),
        { contents, generationConfig: { responseMimeType: 'application/json', responseSchema } },
        key,
      ),
    );
    const value = JSON.parse((dialect.candidates[0]!.content.parts[0] as { text: string }).text) as unknown;
    expect(
      schemaErrors(
        {
          type: 'object',
          properties: {
            name: { type: 'string' },
            nick: { type: ['string', 'null'] },
            scores: { type: 'array', minItems: 3, maxItems: 3, items: { type: 'number', minimum: 5000 } },
          },
          required: ['name', 'nick', 'scores'],
        },
        value,
      ),
    ).toEqual([]);
  });

  it('applies maxOutputTokens', async () => {
    const body = await json<GenerateBody>(
      await post(model('g', 'generateContent'), { contents, generationConfig: { maxOutputTokens: 1 } }, key),
    );
    expect(body.candidates[0]!.finishReason).toBe('MAX_TOKENS');
  });

  it('embeds single and batched content', async () => {
    const one = await json<{ embedding: { values: number[] } }>(
      await post(model('text-embedding-004', 'embedContent'), { content: { parts: [{ text: 'hi' }] } }, key),
    );
    expect(one.embedding.values).toHaveLength(8);
    const batch = await json<{ embeddings: { values: number[] }[] }>(
      await post(
        model('text-embedding-004', 'batchEmbedContents'),
        {
          requests: [
            { model: 'models/text-embedding-004', content: { parts: [{ text: 'hi' }] } },
            {
              model: 'models/text-embedding-004',
              content: { parts: [{ text: 'yo' }] },
              outputDimensionality: 4,
            },
          ],
        },
        key,
      ),
    );
    expect(batch.embeddings[0]!.values).toEqual(one.embedding.values);
    expect(batch.embeddings[1]!.values).toHaveLength(4);
  });

  it('accepts the key as a query parameter and redacts it in the record', async () => {
    const res = await post(model('g', 'generateContent', '?key=AIza-secret'), { contents });
    expect(res.status).toBe(200);
    const rec = sim.requests().at(-1)!;
    expect(rec.path).toBe('/v1beta/models/g:generateContent?key=%3Credacted%3E');
    expect(JSON.stringify(rec)).not.toContain('AIza-secret');
  });

  it('refuses missing (403) and wrong (400 API_KEY_INVALID) keys like the real API', async () => {
    const missing = await post(model('g', 'generateContent'), { contents });
    expect(missing.status).toBe(403);
    expect(await json<GoogleError>(missing)).toMatchObject({
      error: { code: 403, status: 'PERMISSION_DENIED' },
    });
    const strict = await startSimulator({ apiKey: 'right' });
    try {
      const wrong = await post(
        `${strict.url}/v1beta/models/g:generateContent`,
        { contents },
        { 'x-goog-api-key': 'wrong' },
      );
      expect(wrong.status).toBe(400);
      const body = await json<GoogleError & { error: { details: { reason: string }[] } }>(wrong);
      expect(body.error.status).toBe('INVALID_ARGUMENT');
      expect(body.error.details[0]!.reason).toBe('API_KEY_INVALID');
    } finally {
      await strict.close();
    }
  });

  it('rejects invalid requests with INVALID_ARGUMENT', async () => {
    const missing = await json<GoogleError>(await post(model('g', 'generateContent'), {}, key));
    expect(missing.error).toEqual({
      code: 400,
      status: 'INVALID_ARGUMENT',
      message: '* GenerateContentRequest.contents: contents is not specified',
    });
    const wrongRole = await post(
      model('g', 'generateContent'),
      { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] },
      key,
    );
    expect(wrongRole.status).toBe(400);
    const emptyPart = await post(
      model('g', 'generateContent'),
      { contents: [{ role: 'user', parts: [{}] }] },
      key,
    );
    expect(emptyPart.status).toBe(400);
  });

  it('maps injected statuses to Google status names', async () => {
    const res = await post(model('gemini-fail-429', 'generateContent'), { contents }, key);
    expect(res.status).toBe(429);
    expect(await json<GoogleError>(res)).toMatchObject({
      error: { code: 429, status: 'RESOURCE_EXHAUSTED' },
    });
    const unavailable = await post(model('gemini-fail-503', 'generateContent'), { contents }, key);
    expect(await json<GoogleError>(unavailable)).toMatchObject({ error: { status: 'UNAVAILABLE' } });
  });
});
