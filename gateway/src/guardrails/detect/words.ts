/** Word characters for word-boundary checks: letters, digits, marks and `_`, in any script. */
const UNICODE_WORD = /[\p{L}\p{N}\p{M}_]/u;

export function isWordChar(text: string, i: number): boolean {
  if (i < 0 || i >= text.length) return false;
  const c = text.charCodeAt(i);
  if (c < 128) return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
  return UNICODE_WORD.test(text[i]!);
}
