import { expect } from 'vitest';
import { GatewayError } from '#gateway/errors/index';

/** The error `fn` throws, as the fields a client reads: it must throw a GatewayError. */
export function refusal(fn: () => unknown): {
  code: string;
  status: number;
  message: string;
  param?: string;
} {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(thrown, 'expected a GatewayError').toBeInstanceOf(GatewayError);
  const e = thrown as GatewayError;
  return { code: e.code, status: e.status, message: e.message, ...(e.param ? { param: e.param } : {}) };
}
