import { useEffect, useState } from 'preact/hooks';

export type Loaded<T> =
  | { state: 'loading' }
  | { state: 'error'; message: string }
  | { state: 'done'; data: T };

/** Runs `load` whenever `key` changes; an answer for an older key is dropped. */
export function useLoad<T>(key: string, load: () => Promise<T>): Loaded<T> {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' });
  useEffect(() => {
    let live = true;
    setResult({ state: 'loading' });
    load().then(
      (data) => live && setResult({ state: 'done', data }),
      (err: unknown) => live && setResult({ state: 'error', message: (err as Error).message }),
    );
    return () => {
      live = false;
    };
  }, [key]);
  return result;
}
