import type { AttemptTrace, ChainTrace, ExchangeTrace, StepTrace, Tracing } from './types.ts';

// Tracing off: shared constants whose methods do nothing, so a request pays a few empty calls and
// allocates nothing for tracing.

export const NO_ATTEMPT: AttemptTrace = {
  context: undefined,
  answered() {},
  failed() {},
};

const NO_CHAIN: ChainTrace = {
  attempt: () => NO_ATTEMPT,
  skipped() {},
};

export const NO_TRACE: ExchangeTrace = {
  traceId: null,
  context: undefined,
  chain: () => NO_CHAIN,
  child: () => NO_TRACE,
  end() {},
};

const NO_STEP: StepTrace = {
  traceId: null,
  context: undefined,
  set() {},
  fail() {},
  end() {},
};

export const TRACING_OFF: Tracing = {
  enabled: false,
  request: () => NO_TRACE,
  job: () => NO_TRACE,
  step: () => NO_STEP,
  flush: async () => {},
  close: async () => {},
};
