import { z } from 'zod';
import { freeForm, message, sampling, tool, toolChoice, voice } from './common-schema.ts';
import { LIMITS } from './limits.ts';

/**
 * Optional controls in OpenAI's spelling, on both surfaces. null means "not set", as OpenAI reads
 * it. Level and tier names stay open strings: new ones reach OpenAI, and each other provider maps
 * the ones it knows and refuses the rest.
 */
export const chatControls = {
  seed: z.number().int().nullable().optional(),
  presence_penalty: z.number().min(-2).max(2).nullable().optional(),
  frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
  logit_bias: z
    .record(z.string().regex(/^\d+$/, 'logit_bias keys are token ids'), z.number().min(-100).max(100))
    .nullable()
    .optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  reasoning_effort: z.string().min(1).max(32).nullable().optional(),
  service_tier: z.string().min(1).max(32).nullable().optional(),
  store: z.boolean().nullable().optional(),
};

/** Body of POST /v1/ai and /v1/ai/async. Fields of every request type; the workflow's type decides which apply. */
export const nativeBody = z.object({
  workflow: z.string().min(1).max(128).optional(),
  model: z.string().min(1).max(200).optional(),
  provider: z.string().min(1).max(253).optional(),
  messages: z.array(message).min(1, 'messages must not be empty').max(LIMITS.messages).optional(),
  prompt: z.string().min(1).optional(),
  input: z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1).max(LIMITS.embeddingInputs)])
    .optional(),
  ...sampling,
  ...chatControls,
  // Anthropic's and Gemini's top-k sampling (the Messages surface sends it); OpenAI-shaped servers refuse it.
  top_k: z.number().int().min(1).max(1000).optional(),
  stream: z.boolean().optional(),
  format: z.enum(['raw', 'wrapped'], { error: 'format must be raw or wrapped' }).optional(),
  // A JSON schema for structured output, an OpenAI-style {type: json_schema}, or, for audio, a format name.
  response_format: z.union([z.string().min(1).max(32), freeForm]).optional(),
  structured_output_schema: freeForm.optional(),
  tools: z.array(tool).max(LIMITS.tools).optional(),
  tool_choice: toolChoice.optional(),
  inputs: freeForm.optional(),
  metadata: freeForm.optional(),
  context: freeForm.optional(),
  // Checked by the session stage: a malformed id names no session (422 session_not_found), not a 400.
  session_id: z.string().max(256).optional(),
  user: z.string().max(256).optional(),
  // image
  size: z
    .string()
    .regex(/^\d{2,5}x\d{2,5}$/, 'size must look like 1024x1024')
    .optional(),
  quality: z.string().min(1).max(32).optional(),
  style: z.string().min(1).max(32).optional(),
  n: z.number().int().min(1).max(LIMITS.images).optional(),
  // embedding
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().min(1).max(65536).optional(),
  // audio
  file: z.string().min(1).optional(),
  filename: z.string().max(256).optional(),
  language: z.string().min(2).max(16).optional(),
  voice: voice.optional(),
  speed: z.number().min(0.25).max(4).optional(),
});
export type NativeBody = z.infer<typeof nativeBody>;
