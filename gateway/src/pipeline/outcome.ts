import type { CanonicalResult, StreamEvent, Usage } from '../providers/types.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';
import type { UpstreamError } from '../upstream/errors.ts';
import type { Prepared } from './prepare.ts';

/** How a stream ended: normally (with the usage the provider reported), or with an in-stream failure. */
export type StreamEnd =
  | { ok: true; usage: Usage | undefined }
  | {
      ok: false;
      message: string;
      code: string;
      aborted: boolean;
      /** The stream was stopped by the gateway (a spend cap): reported with this code and type, not as upstream_error. */
      refusal?: { code: string; type: string };
    };

/**
 * What the pipeline hands an encoder. Encoders only turn it into bytes; everything they need to say
 * (meta, headers, usage, attempts) is in here or in the exchange's record.
 */
export type Outcome =
  | {
      kind: 'answered';
      prepared: Prepared;
      result: CanonicalResult;
      slot: RuntimeSlot | undefined;
      /** The parsed structured-output value, when the request asked for one. */
      structured: unknown;
    }
  | {
      kind: 'streaming';
      prepared: Prepared;
      /** Undefined for a cache hit replayed as a stream. */
      slot: RuntimeSlot | undefined;
      /** Yields canonical events; returns how the stream ended. Never throws. */
      events: AsyncGenerator<StreamEvent, StreamEnd, void>;
    }
  | { kind: 'failed'; prepared: Prepared; error: UpstreamError };
