/**
 * Tool name patterns (allowTools, denyTools, key toolGrants): `*` matches any run of characters,
 * everything else itself. Compiled to an anchored regular expression with every other character
 * escaped, so a pattern can never be a regex of its own.
 */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`);
}

/** Whether `name` passes allow (absent: everything) and deny (wins over allow). */
export function toolOffered(
  name: string,
  allow: readonly string[] | undefined,
  deny: readonly string[],
): boolean {
  if (deny.some((g) => globToRegExp(g).test(name))) return false;
  return allow === undefined || allow.some((g) => globToRegExp(g).test(name));
}
