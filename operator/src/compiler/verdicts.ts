import type { SwitchyardObject } from '../resources/index.ts';
import { type Reason, refKey, refOf, type Verdict } from './types.ts';

/** Collects one verdict per object; later passes read earlier ones (a workflow needs a Ready provider). */
export class Verdicts {
  readonly #byKey = new Map<string, Verdict>();

  ok(o: SwitchyardObject, message: string, details: Record<string, string | number> = {}): void {
    this.#byKey.set(refKey(refOf(o)), { ref: refOf(o), ok: true, reason: 'Valid', message, details });
  }

  fail(
    o: SwitchyardObject,
    reason: Reason,
    message: string,
    details: Record<string, string | number> = {},
  ): void {
    this.#byKey.set(refKey(refOf(o)), { ref: refOf(o), ok: false, reason, message, details });
  }

  get(kind: SwitchyardObject['kind'], namespace: string, name: string): Verdict | undefined {
    return this.#byKey.get(refKey({ kind, namespace, name }));
  }

  all(): Verdict[] {
    return [...this.#byKey.values()].sort((a, b) => refKey(a.ref).localeCompare(refKey(b.ref)));
  }
}
