/**
 * The transcription upload (http/transcription-form.ts), read from real multipart requests through
 * a minimal Fastify app registered like the compatible surface's upload route. Every malformed
 * upload gets a 4xx in OpenAI's error shape, never a 5xx.
 */
import multipart from '@fastify/multipart';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTranscriptionForm } from '#gateway/http/transcription-form';
import { LIMITS } from '#gateway/requests/limits';
import { type TestApp, testApp } from './helpers.ts';

let t: TestApp;

beforeAll(async () => {
  t = testApp({ bodyLimit: 1024 });
  void t.app.register(async (uploads) => {
    await uploads.register(multipart, { attachFieldsToBody: false });
    uploads.post(
      '/v1/audio/transcriptions',
      { config: { surface: 'compat' }, bodyLimit: LIMITS.audioFileBytes + 1024 * 1024 },
      async (req) => readTranscriptionForm(req),
    );
  });
  await t.app.ready();
});
afterAll(() => t?.app.close());

type Part = [name: string, value: string | { data: Uint8Array; filename?: string }];

/** A multipart/form-data body as `fetch` would encode it, sent through the app. */
async function upload(parts: Part[]) {
  const fd = new FormData();
  for (const [name, value] of parts)
    if (typeof value === 'string') fd.append(name, value);
    else fd.append(name, new Blob([value.data], { type: 'audio/wav' }), value.filename);
  const encoded = new Response(fd);
  return t.app.inject({
    method: 'POST',
    url: '/v1/audio/transcriptions',
    payload: Buffer.from(await encoded.arrayBuffer()),
    headers: { 'content-type': encoded.headers.get('content-type')! },
  });
}

const AUDIO = new Uint8Array([82, 73, 70, 70, 1, 2, 3, 4]);
const openaiError = (message: string, param: string | null, code = 'invalid_request') => ({
  error: { message, type: 'invalid_request_error', param, code },
});

describe('readTranscriptionForm', () => {
  it('reads the file and the text fields into the native body', async () => {
    const r = await upload([
      ['model', 'transcribe'],
      ['file', { data: AUDIO, filename: 'hello.wav' }],
      ['language', 'en'],
      ['prompt', 'Names: Ada.'],
      ['response_format', 'verbose_json'],
      ['temperature', '0.2'],
    ]);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({
      body: {
        model: 'transcribe',
        file: Buffer.from(AUDIO).toString('base64'),
        filename: 'hello.wav',
        language: 'en',
        prompt: 'Names: Ada.',
        response_format: 'verbose_json',
      },
    });
  });

  it('text parts it does not know are passed over', async () => {
    const r = await upload([
      ['timestamp_granularities[]', 'word'],
      ['file', { data: AUDIO, filename: 'a.wav' }],
      ['model', 'transcribe'],
    ]);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({
      body: { model: 'transcribe', file: Buffer.from(AUDIO).toString('base64'), filename: 'a.wav' },
    });
  });

  it('a file under another name is not the audio: 400 on `file`', async () => {
    const r = await upload([
      ['model', 'transcribe'],
      ['audio', { data: AUDIO, filename: 'a.wav' }],
    ]);
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual(openaiError('file is required.', 'file'));
  });

  it('more than one file: 400, not a 5xx', async () => {
    const r = await upload([
      ['model', 'transcribe'],
      ['cover', { data: new Uint8Array([1]), filename: 'cover.png' }],
      ['file', { data: AUDIO, filename: 'a.wav' }],
    ]);
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_request' } });
  });

  it('a JSON body: 415, saying how to upload', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcriptions',
      payload: { model: 'transcribe', file: 'UklGRg==' },
    });
    expect(r.statusCode).toBe(415);
    expect(r.json()).toEqual(
      openaiError(
        'Transcriptions are uploaded as multipart/form-data. Send the audio in a "file" part and the workflow name in "model".',
        null,
        'unsupported_media_type',
      ),
    );
  });

  it('no model: 400 on `model`', async () => {
    const r = await upload([['file', { data: AUDIO, filename: 'a.wav' }]]);
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual(openaiError('model is required: send the workflow name.', 'model'));
  });

  it('no file, or an empty one: 400 on `file`', async () => {
    for (const parts of [
      [['model', 'transcribe']],
      [
        ['model', 'transcribe'],
        ['file', { data: new Uint8Array(0), filename: 'a.wav' }],
      ],
    ] as Part[][]) {
      const r = await upload(parts);
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual(openaiError('file is required.', 'file'));
    }
  });

  it('a response_format it cannot answer in: 400 on `response_format`', async () => {
    const r = await upload([
      ['model', 'transcribe'],
      ['file', { data: AUDIO, filename: 'a.wav' }],
      ['response_format', 'srt'],
    ]);
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual(
      openaiError('response_format must be json, text or verbose_json.', 'response_format'),
    );
  });

  it('a file over the limit: 413 on `file`', async () => {
    const r = await upload([
      ['model', 'transcribe'],
      ['file', { data: new Uint8Array(LIMITS.audioFileBytes + 1), filename: 'long.wav' }],
    ]);
    expect(r.statusCode).toBe(413);
    expect(r.json()).toEqual(openaiError('file exceeds 25 MB.', 'file', 'payload_too_large'));
  });

  it('a multipart body cut short: 400 naming the fault, not a 5xx', async () => {
    const boundary = 'XyZ';
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcriptions',
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\ntranscribe\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF`,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual(openaiError('Malformed multipart body: Premature close', null));
  });
});
