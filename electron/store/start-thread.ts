/**
 * Starting a worker thread of Waystation's own (the version-file checks'): its
 * compiled entry beside the module that starts it, or, when that module runs
 * from the TypeScript sources, the .ts entry through tsx's loader, which a
 * worker thread has to register for itself.
 */
import { Worker } from 'node:worker_threads';

/**
 * The thread's young generation, small: what such a thread allocates dies at
 * once, and a large young generation would stay resident as the process's
 * memory for no use.
 */
const YOUNG = { maxYoungGenerationSizeMb: 4 };

/** Start the entry `name` (no extension) that sits beside the module at `startedFrom` (its import.meta.url). */
export function startThread(startedFrom: string, name: string, workerData: unknown): Worker {
  const isTs = startedFrom.endsWith('.ts');
  const entry = new URL(`./${name}${isTs ? '.ts' : '.js'}`, startedFrom);
  if (!isTs) return new Worker(entry, { workerData, resourceLimits: YOUNG });
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(boot, { eval: true, workerData, resourceLimits: YOUNG });
}
