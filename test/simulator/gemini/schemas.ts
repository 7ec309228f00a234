/**
 * zod schemas of the documented Gemini (Generative Language API) request bodies, camelCase JSON form.
 * (The real API also accepts snake_case field names; those are tolerated here but not interpreted.)
 */
import { z } from 'zod';

const DATA_FIELDS = [
  'text',
  'inlineData',
  'fileData',
  'functionCall',
  'functionResponse',
  'executableCode',
  'codeExecutionResult',
] as const;

export const part = z
  .looseObject({
    text: z.string().optional(),
    inlineData: z.looseObject({ mimeType: z.string(), data: z.string() }).optional(),
    fileData: z.looseObject({ mimeType: z.string().optional(), fileUri: z.string() }).optional(),
    functionCall: z
      .looseObject({
        name: z.string(),
        args: z.record(z.string(), z.unknown()).optional(),
        id: z.string().optional(),
      })
      .optional(),
    functionResponse: z
      .looseObject({
        name: z.string(),
        response: z.record(z.string(), z.unknown()),
        id: z.string().optional(),
      })
      .optional(),
    thought: z.boolean().optional(),
    thoughtSignature: z.string().optional(),
  })
  .refine((p) => DATA_FIELDS.some((f) => p[f] !== undefined), {
    message: `a part must set one of ${DATA_FIELDS.join(', ')}`,
  });

export const content = z.looseObject({
  role: z.enum(['user', 'model']).optional(),
  parts: z.array(part).min(1),
});
export type GeminiContent = z.infer<typeof content>;

const functionDeclaration = z.looseObject({
  name: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$/, 'invalid function name'),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
  parametersJsonSchema: z.unknown().optional(),
});

const generationConfig = z.looseObject({
  temperature: z.number().min(0).max(2).optional(),
  topP: z.number().min(0).max(1).optional(),
  topK: z.number().int().min(1).optional(),
  candidateCount: z.number().int().min(1).max(8).optional(),
  maxOutputTokens: z.number().int().min(1).optional(),
  stopSequences: z.array(z.string()).max(5).optional(),
  responseMimeType: z.string().optional(),
  responseSchema: z.record(z.string(), z.unknown()).optional(),
  responseJsonSchema: z.unknown().optional(),
  presencePenalty: z.number().optional(),
  frequencyPenalty: z.number().optional(),
  seed: z.number().int().optional(),
  responseModalities: z.array(z.string()).optional(),
  thinkingConfig: z
    .looseObject({ thinkingBudget: z.number().int().optional(), includeThoughts: z.boolean().optional() })
    .optional(),
});

export const generateContentRequest = z.looseObject({
  contents: z.array(content).min(1),
  systemInstruction: z.looseObject({ role: z.string().optional(), parts: z.array(part) }).optional(),
  generationConfig: generationConfig.optional(),
  tools: z
    .array(
      z.looseObject({
        functionDeclarations: z.array(functionDeclaration).optional(),
        googleSearch: z.looseObject({}).optional(),
        codeExecution: z.looseObject({}).optional(),
      }),
    )
    .optional(),
  toolConfig: z
    .looseObject({
      functionCallingConfig: z
        .looseObject({
          mode: z.enum(['MODE_UNSPECIFIED', 'AUTO', 'ANY', 'NONE', 'VALIDATED']).optional(),
          allowedFunctionNames: z.array(z.string()).optional(),
        })
        .optional(),
    })
    .optional(),
  safetySettings: z.array(z.looseObject({ category: z.string(), threshold: z.string() })).optional(),
  cachedContent: z.string().optional(),
});
export type GenerateContentRequest = z.infer<typeof generateContentRequest>;

const embedFields = {
  content: z.looseObject({ role: z.string().optional(), parts: z.array(part).min(1) }),
  taskType: z.string().optional(),
  title: z.string().optional(),
  outputDimensionality: z.number().int().min(1).optional(),
};
export const embedContentRequest = z.looseObject({ model: z.string().optional(), ...embedFields });
export type EmbedContentRequest = z.infer<typeof embedContentRequest>;

export const batchEmbedContentsRequest = z.looseObject({
  requests: z.array(z.looseObject({ model: z.string(), ...embedFields })).min(1),
});
export type BatchEmbedContentsRequest = z.infer<typeof batchEmbedContentsRequest>;

export const countTokensRequest = z.looseObject({
  contents: z.array(content).optional(),
  generateContentRequest: z.looseObject({}).optional(),
});
