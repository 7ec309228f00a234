/** zod schemas of the documented Bedrock Runtime request bodies: Converse and the InvokeModel families. */
import { z } from 'zod';

const BLOCK_FIELDS = [
  'text',
  'image',
  'document',
  'video',
  'toolUse',
  'toolResult',
  'guardContent',
  'reasoningContent',
  'cachePoint',
] as const;

/** A prompt-cache checkpoint: it caches the prompt up to the block before it. */
const cachePoint = z.looseObject({ type: z.literal('default'), ttl: z.enum(['5m', '1h']).optional() });
export type CachePoint = z.infer<typeof cachePoint>;

const block = z
  .looseObject({
    text: z.string().min(1, 'text field is blank').optional(),
    cachePoint: cachePoint.optional(),
    image: z
      .looseObject({
        format: z.enum(['png', 'jpeg', 'gif', 'webp']),
        source: z.union([
          z.looseObject({ bytes: z.string().min(1) }),
          z.looseObject({ s3Location: z.looseObject({ uri: z.string().startsWith('s3://') }) }),
        ]),
      })
      .optional(),
    toolUse: z
      .looseObject({ toolUseId: z.string().min(1), name: z.string().min(1), input: z.unknown() })
      .optional(),
    toolResult: z
      .looseObject({
        toolUseId: z.string().min(1),
        content: z.array(z.looseObject({ text: z.string().optional(), json: z.unknown().optional() })),
        status: z.enum(['success', 'error']).optional(),
      })
      .optional(),
  })
  .refine((b) => BLOCK_FIELDS.filter((f) => (b as Record<string, unknown>)[f] !== undefined).length === 1, {
    message: 'a content block must set exactly one member',
  });

export const message = z.looseObject({ role: z.enum(['user', 'assistant']), content: z.array(block).min(1) });
export type ConverseMessage = z.infer<typeof message>;

const toolSpec = z.looseObject({
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'invalid tool name'),
  description: z.string().min(1).optional(),
  inputSchema: z.looseObject({ json: z.record(z.string(), z.unknown()) }),
});

const exactlyOne = (fields: readonly string[]) => (b: Record<string, unknown>) =>
  fields.filter((f) => b[f] !== undefined).length === 1;

export const converseRequest = z.looseObject({
  messages: z.array(message).min(1),
  system: z
    .array(
      z
        .looseObject({ text: z.string().min(1).optional(), cachePoint: cachePoint.optional() })
        .refine(exactlyOne(['text', 'cachePoint', 'guardContent']), {
          message: 'a system block must set exactly one member',
        }),
    )
    .optional(),
  inferenceConfig: z
    .looseObject({
      maxTokens: z.number().int().min(1).optional(),
      temperature: z.number().min(0).max(1).optional(),
      topP: z.number().min(0).max(1).optional(),
      stopSequences: z.array(z.string().min(1)).max(4).optional(),
    })
    .optional(),
  toolConfig: z
    .looseObject({
      tools: z
        .array(
          z
            .looseObject({ toolSpec: toolSpec.optional(), cachePoint: cachePoint.optional() })
            .refine(exactlyOne(['toolSpec', 'cachePoint']), {
              message: 'a tool must set exactly one member',
            }),
        )
        .min(1),
      toolChoice: z
        .union([
          z.looseObject({ auto: z.looseObject({}) }),
          z.looseObject({ any: z.looseObject({}) }),
          z.looseObject({ tool: z.looseObject({ name: z.string() }) }),
        ])
        .optional(),
    })
    .optional(),
  requestMetadata: z.record(z.string(), z.string().regex(/^[a-zA-Z0-9\s:_@$#=/+,.-]{0,256}$/)).optional(),
  serviceTier: z.looseObject({ type: z.enum(['priority', 'default', 'flex', 'reserved']) }).optional(),
  additionalModelRequestFields: z.record(z.string(), z.unknown()).optional(),
});
export type ConverseRequest = z.infer<typeof converseRequest>;

export const titanEmbedRequest = z.strictObject({
  inputText: z.string().min(1),
  dimensions: z.union([z.literal(256), z.literal(512), z.literal(1024)]).optional(),
  normalize: z.boolean().optional(),
  embeddingTypes: z.array(z.enum(['float', 'binary'])).optional(),
});

export const cohereEmbedRequest = z.strictObject({
  texts: z.array(z.string()).min(1).max(96),
  input_type: z.enum(['search_document', 'search_query', 'classification', 'clustering']),
  truncate: z.enum(['NONE', 'START', 'END']).optional(),
  embedding_types: z.array(z.enum(['float', 'int8', 'uint8', 'binary', 'ubinary'])).optional(),
  output_dimension: z.union([z.literal(256), z.literal(512), z.literal(1024), z.literal(1536)]).optional(),
});

export const titanImageRequest = z.looseObject({
  taskType: z.literal('TEXT_IMAGE'),
  textToImageParams: z.looseObject({
    text: z.string().min(1).max(1024),
    negativeText: z.string().optional(),
  }),
  imageGenerationConfig: z
    .looseObject({
      numberOfImages: z.number().int().min(1).max(5).optional(),
      width: z.number().int().min(320).max(4096).optional(),
      height: z.number().int().min(320).max(4096).optional(),
      quality: z.enum(['standard', 'premium']).optional(),
      cfgScale: z.number().optional(),
      seed: z.number().int().optional(),
    })
    .optional(),
});
