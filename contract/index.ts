export * from './hash.ts';
export * from './redis-connection.ts';
export * from './redis-keys.ts';
export * from './seal.ts';
export * from './snapshot.ts';
export * from './spend.ts';
export * from './vocabulary.ts';
export * from './webhook-keys.ts';
