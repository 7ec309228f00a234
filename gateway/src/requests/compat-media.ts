import type { z } from 'zod';
import {
  compatEmbeddingBody,
  compatImageBody,
  compatSpeechBody,
  type UNSUPPORTED_IMAGE_PARAMS,
  type UNSUPPORTED_SPEECH_PARAMS,
} from './compat-schema.ts';
import type { NativeBody } from './native-schema.ts';
import { paramRules, refuseParams } from './param-rules.ts';
import { parseBody } from './zod-error.ts';

/*
 * The embeddings, images and speech endpoints know every parameter OpenAI's API takes for them:
 * each is sent on, accepted and documented as not sent (`user`), or refused when set. Any other
 * parameter is refused, as on chat completions.
 */

/** The values of each refused image parameter that ask for nothing (OpenAI's defaults). */
const IMAGE_REFUSED = {
  background: ['auto'],
  moderation: ['auto'],
  output_format: [],
  output_compression: [],
  partial_images: [],
  stream: [],
  complexity: [],
  frame_count: [],
  frame_duration_ms: [],
  safety_identifier: [''],
  svg: [],
} satisfies Record<(typeof UNSUPPORTED_IMAGE_PARAMS)[number], readonly unknown[]>;

/** `audio` asks for the audio bytes, which is what the endpoint answers. */
const SPEECH_REFUSED = {
  instructions: [''],
  stream_format: ['audio'],
} satisfies Record<(typeof UNSUPPORTED_SPEECH_PARAMS)[number], readonly unknown[]>;

const EMBEDDING_PARAMS = paramRules(compatEmbeddingBody.shape);
const IMAGE_PARAMS = paramRules(compatImageBody.shape, IMAGE_REFUSED);
const SPEECH_PARAMS = paramRules(compatSpeechBody.shape, SPEECH_REFUSED);

export type CompatEmbeddingBody = z.infer<typeof compatEmbeddingBody>;

/** POST /v1/embeddings: the body checked, and in the native vocabulary. */
export function compatEmbedding(raw: unknown): { body: CompatEmbeddingBody; native: NativeBody } {
  refuseParams(raw, EMBEDDING_PARAMS);
  const body = parseBody(compatEmbeddingBody, raw);
  return { body, native: { ...body } };
}

/** POST /v1/images/generations: the body checked, and in the native vocabulary. */
export function compatImage(raw: unknown): { model: string; native: NativeBody } {
  refuseParams(raw, IMAGE_PARAMS);
  const { model, prompt, n, size, quality, style, response_format, user } = parseBody(compatImageBody, raw);
  return {
    model,
    native: {
      model,
      prompt,
      ...(n !== undefined ? { n } : {}),
      ...(size !== undefined && size !== 'auto' ? { size } : {}),
      ...(quality !== undefined ? { quality } : {}),
      ...(style !== undefined ? { style } : {}),
      ...(response_format !== undefined ? { response_format } : {}),
      ...(user !== undefined ? { user } : {}),
    },
  };
}

/** POST /v1/audio/speech: the body checked, and in the native vocabulary. */
export function compatSpeech(raw: unknown): NativeBody {
  refuseParams(raw, SPEECH_PARAMS);
  const { model, input, voice, response_format, speed } = parseBody(compatSpeechBody, raw);
  return {
    model,
    input,
    voice,
    ...(response_format !== undefined ? { response_format } : {}),
    ...(speed !== undefined ? { speed } : {}),
  };
}
