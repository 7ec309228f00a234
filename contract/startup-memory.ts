import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

interface GcOptions {
  type: 'major';
  execution: 'sync';
  flavor: 'last-resort';
}

/**
 * Gives back the memory start-up used and no longer needs, once: the gateway before it takes
 * traffic, the operator once its caches are synced. Loading modules, the snapshot or the cluster's
 * objects grows V8's young generation to tens of MB, which an idle pod would otherwise keep
 * resident; only a last-resort collection (the one V8 runs before giving up on memory) shrinks it
 * again, and V8 offers no other way to ask for one. The collector is taken from a fresh context,
 * so `gc` never appears on the application's global object.
 */
export function releaseStartupMemory(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as ((options: GcOptions) => void) | undefined;
  gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}
