/**
 * import() of a module from outside the build: an agent's own module, tsx
 * for a TypeScript one, a module of Node's loaded on demand.
 *
 * The compiled CLI runs itself and its workers as one script each from V8's
 * code cache (code-cache-script.cts), and in Node 20 code that V8 took from a
 * cache has no dynamic import callback: its import() fails with
 * ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING. That loader, compiled as usual,
 * hands over an import() of its own for such code; everywhere else this is
 * import(). (import() of the build's own modules is no concern: the bundler
 * turns it into a call within the script.)
 */

/** Where code-cache-script.cts puts its import(), for the script it runs. */
export const HANDED_IMPORT = Symbol.for('waystation.importModule');

export function importModule<T = Record<string, unknown>>(specifier: string): Promise<T> {
  const handed = (globalThis as Record<symbol, unknown>)[HANDED_IMPORT] as ((s: string) => Promise<T>) | undefined;
  return handed ? handed(specifier) : (import(specifier) as Promise<T>);
}
