import { describe, expect, it } from 'vitest';
import {
  badResponse,
  clientHttpStatus,
  isRetryable,
  streamCut,
  streamErrorEvent,
  UPSTREAM_ERRORS,
  UpstreamError,
  type UpstreamErrorCode,
  unsupported,
} from '#gateway/upstream/errors';

const CODES = Object.keys(UPSTREAM_ERRORS) as UpstreamErrorCode[];

describe('UPSTREAM_ERRORS', () => {
  it('describes every code', () => {
    expect(CODES.sort()).toEqual([
      'UPSTREAM_ABORTED',
      'UPSTREAM_BAD_RESPONSE',
      'UPSTREAM_CONNECT',
      'UPSTREAM_STATUS',
      'UPSTREAM_STREAM_CUT',
      'UPSTREAM_TIMEOUT',
      'UPSTREAM_UNSUPPORTED',
    ]);
    for (const code of CODES) expect(UPSTREAM_ERRORS[code].description.length, code).toBeGreaterThan(20);
  });

  it('derives retryable for UPSTREAM_STATUS from the upstream status', () => {
    const retryable = (status: number) =>
      new UpstreamError('x', { code: 'UPSTREAM_STATUS', status }).retryable;
    for (const status of [408, 429, 500, 502, 503, 529]) expect(retryable(status), String(status)).toBe(true);
    for (const status of [400, 401, 403, 404, 413, 422])
      expect(retryable(status), String(status)).toBe(false);
    expect(isRetryable('UPSTREAM_STATUS', undefined)).toBe(false);
  });

  it('fixes retryable and the recorded status of the other codes', () => {
    const made = (code: UpstreamErrorCode) => new UpstreamError('x', { code });
    expect(made('UPSTREAM_TIMEOUT')).toMatchObject({ retryable: true, status: 504 });
    expect(made('UPSTREAM_CONNECT')).toMatchObject({ retryable: true, status: 502 });
    expect(made('UPSTREAM_BAD_RESPONSE')).toMatchObject({ retryable: true, status: 502 });
    expect(made('UPSTREAM_STREAM_CUT')).toMatchObject({ retryable: true, status: 502 });
    expect(made('UPSTREAM_UNSUPPORTED')).toMatchObject({ retryable: false, status: undefined });
    expect(made('UPSTREAM_ABORTED')).toMatchObject({ retryable: false, status: undefined });
    // An upstream status given by the raiser is kept.
    expect(new UpstreamError('x', { code: 'UPSTREAM_BAD_RESPONSE', status: 200 }).status).toBe(200);
  });

  it('lets a provider body outrank its status only when the raiser says so', () => {
    const e = new UpstreamError('x', { code: 'UPSTREAM_STATUS', status: 400, retryable: true });
    expect(e.retryable).toBe(true);
  });

  it('reports the upstream 4xx (but 429) to clients, 504 for timeouts, else 502', () => {
    const http = (code: UpstreamErrorCode, status?: number) =>
      new UpstreamError('x', { code, status }).httpStatus;
    expect(http('UPSTREAM_STATUS', 400)).toBe(400);
    expect(http('UPSTREAM_STATUS', 404)).toBe(404);
    expect(http('UPSTREAM_STATUS', 429)).toBe(502);
    expect(http('UPSTREAM_STATUS', 503)).toBe(502);
    expect(http('UPSTREAM_STATUS', 529)).toBe(502);
    expect(http('UPSTREAM_TIMEOUT')).toBe(504);
    for (const code of CODES.filter((c) => c !== 'UPSTREAM_STATUS' && c !== 'UPSTREAM_TIMEOUT'))
      expect(http(code), code).toBe(502);
    expect(clientHttpStatus('UPSTREAM_STATUS', undefined)).toBe(502);
  });

  it('builds the helpers from the table', () => {
    expect(unsupported('no images')).toMatchObject({ code: 'UPSTREAM_UNSUPPORTED', retryable: false });
    expect(badResponse('bad')).toMatchObject({ code: 'UPSTREAM_BAD_RESPONSE', status: 502, retryable: true });
    expect(streamCut('cut')).toMatchObject({ code: 'UPSTREAM_STREAM_CUT', status: 502, retryable: true });
  });

  it('classifies an error event by the status it stands for, 502 when it names none', () => {
    expect(streamErrorEvent({ status: 529, message: 'Overloaded', code: 'overloaded_error' })).toMatchObject({
      code: 'UPSTREAM_STATUS',
      status: 529,
      retryable: true,
      providerMessage: 'Overloaded',
      providerCode: 'overloaded_error',
    });
    expect(streamErrorEvent({ status: 400, message: 'bad', code: undefined })).toMatchObject({
      code: 'UPSTREAM_STATUS',
      status: 400,
      retryable: false,
      httpStatus: 400,
    });
    expect(streamErrorEvent({ status: undefined, message: undefined, code: undefined })).toMatchObject({
      code: 'UPSTREAM_STATUS',
      status: 502,
      retryable: true,
      providerMessage: 'upstream reported an error mid-stream',
    });
  });
});
