/** Public types of the provider simulator; re-exported by index.ts. */

export type ProviderName =
  | 'openai'
  | 'azure-openai'
  | 'anthropic'
  | 'gemini'
  | 'bedrock'
  | 'vertex-ai'
  | 'cohere'
  /** The fake STS (AssumeRoleWithWebIdentity) that issues Bedrock's temporary keys. */
  | 'aws-sts'
  /** The fake Google token endpoint and metadata server that issue Vertex AI's access tokens. */
  | 'google-auth';

export interface SimulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** When set, only this exact key is accepted; otherwise any non-empty key is. */
  apiKey?: string;
  /** Fixed delay before every answer (benchmark "upstream latency"). Default 0. */
  delayMs?: number;
  /** Content chunks per streamed answer. Default 8. */
  streamChunks?: number;
  /** Pause between streamed chunks. Default 0. */
  chunkIntervalMs?: number;
  /** false skips zod validation of request bodies (benchmarks). Default true. */
  validate?: boolean;
  /** Bedrock: the AWS key pair SigV4 signatures are checked against (besides keys the fake STS issued). */
  aws?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** The fake STS: the web identity token it accepts, and how long the keys it issues live. */
  webIdentity?: { token: string; durationSeconds?: number };
  /**
   * The fake Google token endpoint (`POST /token`): the service account whose RS256 assertions it
   * accepts (PEM public key), and how long the access tokens it and the metadata server issue live.
   */
  google?: { clientEmail: string; publicKey: string; tokenTtlSeconds?: number };
}

export interface FaultRule {
  /** Every given field must match; a missing match matches every request. */
  match?: {
    provider?: ProviderName;
    /** Exact model (OpenAI/Anthropic body `model`, Azure deployment, Gemini path model). */
    model?: string;
    /** Substring of the request pathname, e.g. '/chat/completions' or ':streamGenerateContent'. */
    path?: string;
  };
  /** How many requests the rule applies to; unlimited when absent. */
  times?: number;
  /** Answer with this status and the provider's own error body. */
  status?: number;
  /** Seconds for the `retry-after` header sent with `status`. */
  retryAfter?: number;
  /** Delay before the status line and headers. */
  delayMs?: number;
  /** Delay after the headers were flushed, before the first body byte. */
  firstByteDelayMs?: number;
  /** Never answer (the socket stays open until the client gives up or the simulator closes). */
  hang?: boolean;
  /** Destroy the socket after this many stream events (non-stream: after half the body). */
  cutAfterChunks?: number;
  /** 'body': truncated JSON body; 'chunk': one stream event carries truncated JSON. */
  malformed?: 'body' | 'chunk';
  /** A valid JSON body carrying an extra field nested this many arrays deep (non-stream answers). */
  deepJson?: number;
  /** Reset the TCP connection instead of answering. */
  resetConnection?: boolean;
  /** Per-rule stream pacing, overriding the simulator options. */
  streamChunks?: number;
  chunkIntervalMs?: number;
  /** Bedrock streams: one event-stream frame carries a wrong message CRC. */
  corruptCrc?: boolean;
  /** OpenAI chat: report this many prompt tokens in usage (a provider whose tokenizer counts more). */
  promptTokens?: number;
  /**
   * Report this many of the prompt tokens as read from the provider's prompt cache: OpenAI's
   * `prompt_tokens_details.cached_tokens`, Gemini's `cachedContentTokenCount`, Bedrock's
   * `cacheReadInputTokens` (Anthropic's cache is simulated from `cache_control` instead).
   */
  cachedTokens?: number;
  /** Bedrock: report this many of the prompt tokens as written to the prompt cache (`cacheWriteInputTokens`). */
  cacheWriteTokens?: number;
  /** A scripted tool call: when the model calls a tool (toolcall.ts), it calls `name` with `args`. */
  toolCall?: ScriptedToolCall;
}

export interface ScriptedToolCall {
  name: string;
  args: Record<string, unknown>;
}

export interface RecordedRequest {
  provider: ProviderName;
  method: string;
  /** Pathname plus query string (a `key` query parameter is redacted). */
  path: string;
  /** Lower-case header names; credential headers are replaced by '<redacted>'. */
  headers: Record<string, string>;
  /** Parsed JSON; multipart bodies as { fields, files: [{ field, filename, contentType, size }] }. */
  body: unknown;
}

export interface Simulator {
  url: string;
  port: number;
  addFault(rule: FaultRule): void;
  clearFaults(): void;
  requests(): RecordedRequest[];
  clearRequests(): void;
  close(): Promise<void>;
}
