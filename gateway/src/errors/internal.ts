import { GatewayError } from './gateway-error.ts';

/** Exceptions that mean a programming error in the gateway, not a dependency that may recover. */
const isBug = (err: unknown): boolean =>
  err instanceof TypeError ||
  err instanceof RangeError ||
  err instanceof ReferenceError ||
  err instanceof SyntaxError;

/**
 * The gateway's own failure: an exception no stage turned into a GatewayError (a bug, or a
 * dependency such as Redis failing in a way nothing expected). Answered 503 `service_unavailable`
 * as docs/api.md says for internal failures, never as the provider's (upstream) or the client's
 * fault; logged with its stack where it is answered (http/errors.ts).
 */
export class InternalError extends GatewayError {
  constructor(cause: unknown, requestId?: string) {
    const bug = isBug(cause);
    super(
      'service_unavailable',
      bug
        ? 'Internal error: the gateway failed to handle this request.'
        : 'The gateway could not handle the request right now; retry shortly.',
      {
        cause,
        ...(requestId ? { hint: `It is logged with request id ${requestId}.` } : {}),
        // A dependency may recover; a bug answers the same request the same way again.
        ...(bug ? {} : { retryAfterSeconds: 1 }),
      },
    );
    this.name = 'InternalError';
  }
}
