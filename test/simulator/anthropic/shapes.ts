/** The decided outcome of a Messages request, shared by the JSON and the streamed rendering. */

export type ContentOut =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown; caller: { type: 'direct' } };

export interface MessageOutcome {
  id: string;
  model: string;
  /** Thinking (when asked for), then the answer: one text or tool_use block. */
  blocks: ContentOut[];
  stopReason: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use';
  stopSequence: string | null;
  inputTokens: number;
  cacheCreationTokens: number;
  /** Of cacheCreationTokens, those written for an hour (the rest for five minutes). */
  cacheCreation1hTokens: number;
  cacheReadTokens: number;
  outputTokens: number;
}

export function usageOf(o: MessageOutcome, outputTokens = o.outputTokens) {
  return {
    input_tokens: o.inputTokens,
    cache_creation_input_tokens: o.cacheCreationTokens,
    cache_read_input_tokens: o.cacheReadTokens,
    cache_creation: {
      ephemeral_5m_input_tokens: o.cacheCreationTokens - o.cacheCreation1hTokens,
      ephemeral_1h_input_tokens: o.cacheCreation1hTokens,
    },
    output_tokens: outputTokens,
    service_tier: 'standard',
  };
}
