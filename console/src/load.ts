import { useEffect, useState } from 'preact/hooks';

export type Loaded<T> =
  | { state: 'loading' }
  | { state: 'error'; message: string }
  | { state: 'done'; data: T };

/** Runs `load` whenever `key` changes; what was loaded for an older key is never shown for this one. */
export function useLoad<T>(key: string, load: () => Promise<T>): Loaded<T> {
  const [result, setResult] = useState<{ key: string; loaded: Loaded<T> }>({
    key,
    loaded: { state: 'loading' },
  });
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setResult({ key, loaded: { state: 'done', data } }),
      (err: unknown) =>
        live && setResult({ key, loaded: { state: 'error', message: (err as Error).message } }),
    );
    return () => {
      live = false;
    };
  }, [key]);
  return result.key === key ? result.loaded : { state: 'loading' };
}
