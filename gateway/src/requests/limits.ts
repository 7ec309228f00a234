/** Request limits, documented in docs/api.md ("Limits"). */
export const LIMITS = {
  /** /v1/ai carries base64 audio (25 MB files become ~34 MB of base64). */
  nativeBodyBytes: 36 * 1024 * 1024,
  /** Chat bodies may carry data: URI images. */
  chatBodyBytes: 20 * 1024 * 1024,
  defaultBodyBytes: 1024 * 1024,
  audioFileBytes: 25 * 1024 * 1024,
  messages: 2048,
  tools: 128,
  embeddingInputs: 2048,
  images: 10,
  maxTokens: 1_000_000,
  stopSequences: 4,
} as const;
