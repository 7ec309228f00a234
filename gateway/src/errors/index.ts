export * from './bodies.ts';
export * from './budget.ts';
export * from './gateway-error.ts';
export * from './guardrail.ts';
export * from './internal.ts';
