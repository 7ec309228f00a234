/**
 * zod schemas of the documented OpenAI request bodies (Azure OpenAI sends the same bodies).
 * Objects are loose: unknown fields are tolerated, wrong types and missing required fields are not.
 */
import { z } from 'zod';

const textPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const imagePart = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({ url: z.string(), detail: z.enum(['auto', 'low', 'high']).optional() }),
});
const audioPart = z.looseObject({
  type: z.literal('input_audio'),
  input_audio: z.looseObject({ data: z.string(), format: z.string() }),
});
const filePart = z.looseObject({
  type: z.literal('file'),
  file: z.looseObject({
    file_data: z.string().optional(),
    file_id: z.string().optional(),
    filename: z.string().optional(),
  }),
});
const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });

const userPart = z.discriminatedUnion('type', [textPart, imagePart, audioPart, filePart]);
const textContent = z.union([z.string(), z.array(textPart)]);

const toolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const message = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: textContent, name: z.string().optional() }),
  z.looseObject({ role: z.literal('developer'), content: textContent, name: z.string().optional() }),
  z.looseObject({
    role: z.literal('user'),
    content: z.union([z.string(), z.array(userPart).min(1)]),
    name: z.string().optional(),
  }),
  z.looseObject({
    role: z.literal('assistant'),
    content: z
      .union([z.string(), z.array(z.discriminatedUnion('type', [textPart, refusalPart])), z.null()])
      .optional(),
    tool_calls: z.array(toolCall).optional(),
    refusal: z.string().nullable().optional(),
    name: z.string().optional(),
  }),
  z.looseObject({ role: z.literal('tool'), content: textContent, tool_call_id: z.string() }),
  z.looseObject({ role: z.literal('function'), content: z.string().nullable(), name: z.string() }),
]);

const functionTool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must match ^[a-zA-Z0-9_-]{1,64}$'),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) }),
]);

const responseFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must match ^[a-zA-Z0-9_-]{1,64}$'),
      description: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullable().optional(),
    }),
  }),
]);

const stop = z.union([z.string(), z.array(z.string()).max(4), z.null()]).optional();
const streamOptions = z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional();
const optionalNumber = (min: number, max: number) => z.number().min(min).max(max).nullable().optional();
const optionalCount = z.number().int().min(1).nullable().optional();

const samplingFields = {
  temperature: optionalNumber(0, 2),
  top_p: optionalNumber(0, 1),
  n: z.number().int().min(1).max(128).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: streamOptions,
  stop,
  max_tokens: optionalCount,
  presence_penalty: optionalNumber(-2, 2),
  frequency_penalty: optionalNumber(-2, 2),
  logit_bias: z.record(z.string(), z.number()).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  user: z.string().optional(),
};

const chatFields = {
  messages: z.array(message).min(1),
  ...samplingFields,
  max_completion_tokens: optionalCount,
  tools: z.array(functionTool).optional(),
  tool_choice: toolChoice.optional(),
  parallel_tool_calls: z.boolean().optional(),
  response_format: responseFormat.optional(),
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
};

export const chatRequest = z.looseObject({ model: z.string().min(1), ...chatFields });
/** Azure: the deployment in the URL names the model, so `model` may be absent. */
export const azureChatRequest = z.looseObject({ model: z.string().optional(), ...chatFields });
export type ChatRequest = z.infer<typeof azureChatRequest>;
export type ChatMessage = z.infer<typeof message>;

const promptInput = z.union([
  z.string(),
  z.array(z.string()),
  z.array(z.number().int()),
  z.array(z.array(z.number().int())),
]);

export const completionRequest = z.looseObject({
  model: z.string().min(1),
  prompt: promptInput,
  ...samplingFields,
  suffix: z.string().nullable().optional(),
  echo: z.boolean().nullable().optional(),
  best_of: z.number().int().min(0).max(20).nullable().optional(),
  logprobs: z.number().int().min(0).max(5).nullable().optional(),
});
export const azureCompletionRequest = completionRequest.extend({ model: z.string().optional() });
export type CompletionRequest = z.infer<typeof azureCompletionRequest>;

const embeddingFields = {
  input: z.union([
    z.string(),
    z.array(z.string()).min(1).max(2048),
    z.array(z.number().int()).min(1),
    z.array(z.array(z.number().int()).min(1)).min(1),
  ]),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().min(1).max(4096).optional(),
  user: z.string().optional(),
};
export const embeddingRequest = z.looseObject({ model: z.string().min(1), ...embeddingFields });
export const azureEmbeddingRequest = z.looseObject({ model: z.string().optional(), ...embeddingFields });
export type EmbeddingRequest = z.infer<typeof azureEmbeddingRequest>;

const imageFields = {
  prompt: z.string().min(1),
  n: z.number().int().min(1).max(10).nullable().optional(),
  size: z.string().nullable().optional(),
  quality: z.enum(['standard', 'hd', 'low', 'medium', 'high', 'auto']).nullable().optional(),
  response_format: z.enum(['url', 'b64_json']).nullable().optional(),
  style: z.enum(['vivid', 'natural']).nullable().optional(),
  user: z.string().optional(),
};
export const imageRequest = z.looseObject({ model: z.string().optional(), ...imageFields });
export type ImageRequest = z.infer<typeof imageRequest>;

const speechFields = {
  input: z.string().min(1).max(4096),
  voice: z.union([z.string().min(1), z.looseObject({ id: z.string() })]),
  response_format: z.enum(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm']).optional(),
  speed: z.number().min(0.25).max(4).optional(),
  instructions: z.string().optional(),
};
export const speechRequest = z.looseObject({ model: z.string().min(1), ...speechFields });
export const azureSpeechRequest = z.looseObject({ model: z.string().optional(), ...speechFields });
export type SpeechRequest = z.infer<typeof azureSpeechRequest>;

/** Multipart transcription form, as decoded by body.ts ({ fields, files }). */
const transcriptionFields = (model: z.ZodType) =>
  z.looseObject({
    fields: z.looseObject({
      model,
      language: z.string().optional(),
      prompt: z.string().optional(),
      response_format: z.enum(['json', 'text', 'srt', 'verbose_json', 'vtt']).optional(),
      temperature: z
        .string()
        .regex(/^\d+(\.\d+)?$/, 'must be a number')
        .optional(),
    }),
    files: z
      .array(z.looseObject({ field: z.string(), filename: z.string(), size: z.number() }))
      .refine((files) => files.some((f) => f.field === 'file'), {
        message: 'file is required',
        path: ['file'],
      }),
  });
export const transcriptionRequest = transcriptionFields(z.string().min(1));
export const azureTranscriptionRequest = transcriptionFields(z.string().optional());
