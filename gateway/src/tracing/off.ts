import type {
  AttemptTrace,
  CallbackTrace,
  ChainTrace,
  ExchangeTrace,
  ToolTrace,
  Tracing,
  WebhookTrace,
} from './types.ts';

// Tracing off: shared constants whose methods do nothing, so a request pays a few empty calls and
// allocates nothing for tracing.

export const NO_ATTEMPT: AttemptTrace = {
  context: undefined,
  answered() {},
  failed() {},
};

export const NO_CHAIN: ChainTrace = {
  attempt: () => NO_ATTEMPT,
  skipped() {},
};

const NO_TOOL: ToolTrace = { end() {} };

export const NO_TRACE: ExchangeTrace = {
  traceId: null,
  context: undefined,
  chain: () => NO_CHAIN,
  child: () => NO_TRACE,
  tool: () => NO_TOOL,
  end() {},
};

const NO_WEBHOOK: WebhookTrace = {
  traceId: null,
  context: undefined,
  end() {},
};

const NO_CALLBACK: CallbackTrace = {
  context: undefined,
  fail() {},
  end() {},
};

export const TRACING_OFF: Tracing = {
  enabled: false,
  request: () => NO_TRACE,
  job: () => NO_TRACE,
  webhook: () => NO_WEBHOOK,
  callback: () => NO_CALLBACK,
  flush: async () => {},
  close: async () => {},
};
