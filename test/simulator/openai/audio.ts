/**
 * POST /v1/audio/transcriptions (multipart) and POST /v1/audio/speech (JSON → audio bytes).
 * The transcript is "Simulated transcription of <filename> (<bytes> bytes)".
 */
import type { MultipartBody } from '../body.ts';
import type { Exchange } from '../exchange.ts';
import { AUDIO_CONTENT_TYPES, audioBytes } from '../media.ts';
import { sendBody, sendJson } from '../respond.ts';
import type { SpeechRequest } from './schemas.ts';

export async function handleTranscription(ex: Exchange): Promise<void> {
  const form = ex.body as MultipartBody;
  const file = form.files.find((f) => f.field === 'file') ?? form.files[0];
  const text = file
    ? `Simulated transcription of ${file.filename} (${file.size} bytes)`
    : 'Simulated transcription';
  const duration = Math.max(1, Math.round((file?.size ?? 0) / 16_000));
  const format = form.fields.response_format ?? 'json';
  const end = `00:00:${String(Math.min(duration, 59)).padStart(2, '0')}`;
  switch (format) {
    case 'text':
      return sendBody(ex, 200, 'text/plain; charset=utf-8', `${text}\n`);
    case 'srt':
      return sendBody(ex, 200, 'text/plain; charset=utf-8', `1\n00:00:00,000 --> ${end},000\n${text}\n\n`);
    case 'vtt':
      return sendBody(
        ex,
        200,
        'text/plain; charset=utf-8',
        `WEBVTT\n\n00:00:00.000 --> ${end}.000\n${text}\n\n`,
      );
    case 'verbose_json':
      return sendJson(ex, 200, {
        task: 'transcribe',
        language: form.fields.language ?? 'english',
        duration,
        text,
        segments: [
          {
            id: 0,
            seek: 0,
            start: 0,
            end: duration,
            text,
            tokens: [],
            temperature: 0,
            avg_logprob: -0.1,
            compression_ratio: 1,
            no_speech_prob: 0,
          },
        ],
      });
    default:
      return sendJson(ex, 200, { text });
  }
}

export async function handleSpeech(ex: Exchange): Promise<void> {
  const req = ex.body as SpeechRequest;
  const format = req.response_format ?? 'mp3';
  return sendBody(ex, 200, AUDIO_CONTENT_TYPES[format] ?? 'audio/mpeg', audioBytes(format, req.input));
}
