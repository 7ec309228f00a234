export * from './bodies.ts';
export * from './gateway-error.ts';
