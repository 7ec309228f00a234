/**
 * :predict, shared by the Gemini API and Vertex AI: Imagen models (`{instances: [{prompt}],
 * parameters: {sampleCount, aspectRatio}}` → `{predictions: [{bytesBase64Encoded, mimeType}]}`) and,
 * on Vertex AI, embedding models (`{instances: [{content}]}` → `{predictions: [{embeddings}]}`).
 */
import { z } from 'zod';
import type { Exchange } from '../exchange.ts';
import { embedding, tokens } from '../generate.ts';
import { PNG_1X1 } from '../media.ts';
import { sendJson } from '../respond.ts';

export const imagenRequest = z.looseObject({
  instances: z.array(z.looseObject({ prompt: z.string().min(1) })).length(1),
  parameters: z
    .looseObject({
      sampleCount: z.number().int().min(1).max(4).optional(),
      aspectRatio: z.enum(['1:1', '3:4', '4:3', '9:16', '16:9']).optional(),
      personGeneration: z.string().optional(),
    })
    .optional(),
});

export const embedPredictRequest = z.looseObject({
  instances: z
    .array(z.looseObject({ content: z.string(), task_type: z.string().optional() }))
    .min(1)
    .max(250),
  parameters: z
    .looseObject({
      outputDimensionality: z.number().int().min(1).optional(),
      autoTruncate: z.boolean().optional(),
    })
    .optional(),
});

export const predictRequest = z.union([imagenRequest, embedPredictRequest]);

export async function handlePredict(ex: Exchange): Promise<void> {
  if (/embedding/.test(ex.model)) {
    const req = embedPredictRequest.parse(ex.body);
    return sendJson(ex, 200, {
      predictions: req.instances.map((i) => ({
        embeddings: {
          values: embedding(i.content, req.parameters?.outputDimensionality ?? 768),
          statistics: { token_count: tokens(i.content), truncated: false },
        },
      })),
      metadata: { billableCharacterCount: req.instances.reduce((s, i) => s + i.content.length, 0) },
    });
  }
  const req = imagenRequest.parse(ex.body);
  const n = req.parameters?.sampleCount ?? 1;
  return sendJson(ex, 200, {
    predictions: Array.from({ length: n }, () => ({
      bytesBase64Encoded: PNG_1X1.toString('base64'),
      mimeType: 'image/png',
    })),
  });
}
