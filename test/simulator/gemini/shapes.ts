/** The decided outcome of a generateContent request, shared by the JSON and the streamed rendering. */

export type GeminiPartOut =
  | { text: string }
  | { functionCall: { name: string; args: unknown } }
  | { inlineData: { mimeType: string; data: string } };

export interface GenerateOutcome {
  responseId: string;
  model: string;
  part: GeminiPartOut;
  finishReason: 'STOP' | 'MAX_TOKENS';
  promptTokens: number;
  /** Of promptTokens, those reported as read from a context cache. */
  cachedTokens: number;
  outputTokens: number;
}

export function usageMetadata(o: GenerateOutcome, outputTokens = o.outputTokens) {
  const usage: Record<string, unknown> = {
    promptTokenCount: o.promptTokens,
    totalTokenCount: o.promptTokens + outputTokens,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: o.promptTokens }],
  };
  if (outputTokens > 0) usage.candidatesTokenCount = outputTokens;
  if (o.cachedTokens > 0) usage.cachedContentTokenCount = o.cachedTokens;
  return usage;
}
