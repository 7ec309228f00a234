import { type Snapshot, snapshot as snapshotSchema } from '#contract';
import { buildRuntime, type Runtime } from './runtime.ts';

export type SnapshotListener = (runtime: Runtime) => void;

/**
 * Holds the current runtime and swaps it atomically: a request reads `current` once and keeps that
 * object for its whole life, so a swap mid-request never mixes two configs. A snapshot that fails
 * validation or unsealing is rejected and the last good one keeps serving.
 */
export class SnapshotStore {
  #current: Runtime | undefined;
  readonly #listeners = new Set<SnapshotListener>();
  readonly #sealKey: Buffer;

  constructor(sealKey: Buffer) {
    this.#sealKey = sealKey;
  }

  get current(): Runtime | undefined {
    return this.#current;
  }

  /** Validates and installs a snapshot; returns false (and changes nothing) if it is the same version. */
  install(input: unknown): boolean {
    const parsed: Snapshot = snapshotSchema.parse(input);
    if (parsed.version === this.#current?.version) return false;
    const runtime = buildRuntime(parsed, this.#sealKey);
    this.#current = runtime;
    for (const l of this.#listeners) l(runtime);
    return true;
  }

  onChange(listener: SnapshotListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
