export * from './hash.ts';
export * from './seal.ts';
export * from './snapshot.ts';
