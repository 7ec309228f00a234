/**
 * Gemini image generation and audio transcription, shared with Vertex AI (same bodies).
 *
 * Images: Imagen models through `:predict` (`{instances: [{prompt}], parameters}` →
 * `{predictions: [{bytesBase64Encoded, mimeType}]}`); Gemini image models (`gemini-…-image…`) through
 * generateContent with image output. Transcription: generateContent with the audio inline and an
 * instruction to transcribe it, which is how the Gemini API transcribes (it has no speech-to-text
 * endpoint of its own).
 */
import { badResponse } from '../../upstream/errors.ts';
import { isObject } from '../common.ts';
import { refuseParam } from '../optional-params.ts';
import type { ImageRequest, ImageResult, TranscriptionRequest, TranscriptionResult } from '../types.ts';
import { type GeminiResponse, normaliseGeminiUsage } from './response.ts';

/** The aspect ratios Imagen takes; Gemini image models take a few more. */
const IMAGEN_RATIOS = ['1:1', '3:4', '4:3', '9:16', '16:9'] as const;
const GEMINI_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'] as const;
const SIZE = /^(\d{2,5})x(\d{2,5})$/;

/** OpenAI's `<width>x<height>` as the nearest aspect ratio, within 5 % (1792x1024 is 16:9). */
export function aspectRatio(size: string, ratios: readonly string[] = IMAGEN_RATIOS): string {
  const m = SIZE.exec(size);
  if (!m) throw refuseParam('gemini', 'size', 'a size is <width>x<height>');
  const want = Number(m[1]) / Number(m[2]);
  let best: string | undefined;
  let bestOff = Number.POSITIVE_INFINITY;
  for (const r of ratios) {
    const [w, h] = r.split(':').map(Number) as [number, number];
    const off = Math.abs(w / h - want) / want;
    if (off < bestOff) {
      best = r;
      bestOff = off;
    }
  }
  if (best === undefined || bestOff > 0.05)
    throw refuseParam('gemini', 'size', `the aspect ratios are ${ratios.join(', ')}`);
  return best;
}

export const isImagen = (model: string): boolean => /(^|\/)imagen-/.test(model);

function checkImageParams(req: ImageRequest): void {
  if (req.style !== undefined) throw refuseParam('gemini', 'style', 'Gemini has no image styles');
  if (req.quality !== undefined && req.quality !== 'standard' && req.quality !== 'auto')
    throw refuseParam('gemini', 'quality', 'Gemini has one image quality');
}

export function buildImagenBody(req: ImageRequest): string {
  checkImageParams(req);
  const parameters: Record<string, unknown> = { sampleCount: req.n ?? 1 };
  if (req.size !== undefined) parameters.aspectRatio = aspectRatio(req.size);
  return JSON.stringify({ instances: [{ prompt: req.prompt }], parameters });
}

/** A Gemini image model answers one image per call. */
export function buildImageGenerateBody(req: ImageRequest): string {
  checkImageParams(req);
  if ((req.n ?? 1) !== 1) throw refuseParam('gemini', 'n', 'Gemini image models make one image per request');
  const generationConfig: Record<string, unknown> = { responseModalities: ['IMAGE'] };
  if (req.size !== undefined)
    generationConfig.imageConfig = { aspectRatio: aspectRatio(req.size, GEMINI_RATIOS) };
  return JSON.stringify({ contents: [{ role: 'user', parts: [{ text: req.prompt }] }], generationConfig });
}

const image = (req: ImageRequest, mimeType: string, b64: string) =>
  req.response_format === 'b64_json' ? { b64_json: b64 } : { url: `data:${mimeType};base64,${b64}` };

export function parseImagen(json: unknown, req: ImageRequest): ImageResult {
  if (!isObject(json) || !Array.isArray(json.predictions))
    throw badResponse('upstream Imagen answer has no predictions');
  const images = (json.predictions as { bytesBase64Encoded?: unknown; mimeType?: unknown }[])
    .filter((p) => typeof p.bytesBase64Encoded === 'string')
    .map((p) =>
      image(req, typeof p.mimeType === 'string' ? p.mimeType : 'image/png', p.bytesBase64Encoded as string),
    );
  // Imagen leaves out what its safety filter removed: none left is an answer the client cannot use.
  if (images.length === 0)
    throw badResponse('upstream Imagen answer has no image (filtered by safety settings?)');
  return { kind: 'image', created: Math.floor(Date.now() / 1000), images };
}

export function parseGeneratedImage(json: unknown, req: ImageRequest): ImageResult {
  if (!isObject(json)) throw badResponse('upstream image answer is not an object');
  const body = json as GeminiResponse;
  const images = (body.candidates?.[0]?.content?.parts ?? [])
    .filter((p) => typeof p.inlineData?.data === 'string')
    .map((p) => image(req, p.inlineData?.mimeType ?? 'image/png', p.inlineData?.data as string));
  if (images.length === 0) throw badResponse('upstream answer has no image');
  return {
    kind: 'image',
    created: Math.floor(Date.now() / 1000),
    images,
    usage: normaliseGeminiUsage(body.usageMetadata),
  };
}

/** No segments or timings come back: `verbose_json` cannot be honoured. */
export function buildTranscriptionBody(req: TranscriptionRequest): string {
  if (req.response_format === 'verbose_json')
    throw refuseParam(
      'gemini',
      'response_format',
      'Gemini transcripts have no segments or timings (verbose_json)',
    );
  let instruction =
    'Generate a verbatim transcript of the speech in this audio. Answer with the transcript only.';
  if (req.language) instruction += ` The speech is in the language with ISO-639-1 code "${req.language}".`;
  if (req.prompt) instruction += ` Context and spelling of names: ${req.prompt}`;
  return JSON.stringify({
    contents: [
      {
        role: 'user',
        parts: [
          { text: instruction },
          { inlineData: { mimeType: req.mimeType, data: Buffer.from(req.file).toString('base64') } },
        ],
      },
    ],
    generationConfig: { temperature: 0 },
  });
}

export function parseTranscription(json: unknown, req: TranscriptionRequest): TranscriptionResult {
  if (!isObject(json)) throw badResponse('upstream transcription answer is not an object');
  const body = json as GeminiResponse;
  const parts = body.candidates?.[0]?.content?.parts;
  if (!parts) throw badResponse('upstream transcription answer has no candidates');
  const text = parts
    .filter((p) => !p.thought && typeof p.text === 'string')
    .map((p) => p.text)
    .join('')
    .trim();
  return {
    kind: 'transcription',
    text,
    ...(req.language ? { language: req.language } : {}),
    usage: normaliseGeminiUsage(body.usageMetadata),
  };
}
