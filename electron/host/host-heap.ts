/**
 * How far the host process lets V8's heap grow between full collections.
 *
 * The host keeps little (its heap is 40 to 56 MiB after a collection, 10,000
 * tasks listed and watched) but makes a great deal that dies young: building
 * that list makes about 300 MiB of objects, and each listing it answers
 * several MiB more. V8 sets the heap's next limit
 * at each full collection, as what survived times a factor it raises up to 4
 * while a program allocates fast, so after the build the heap kept growing
 * with no full collection at all, to over 100 MiB for 40 to 55 MiB of live
 * objects (`--trace-gc-nvp`), and the host over its target of 1.5 times the
 * memory of a process keeping every parsed checkpoint.
 *
 * A factor held at 1.3 costs more full collections while a list is built: the
 * first listing of 10,000 tasks a median of 15% later (1,166 against 1,011
 * ms), against a peak 20 to 40 MiB lower (docs/BENCHMARKS.md, issue 21).
 */
import v8 from 'node:v8';

/** Percent by which the heap may grow over what survived the last full collection. */
export const HOST_HEAP_GROWING_PERCENT = 30;

/**
 * Hold this process's heap growth to HOST_HEAP_GROWING_PERCENT. For a process
 * that hosts the inspector (`waystation serve`, the desktop app's main
 * process); V8 reads the flag at each full collection, so it applies from the
 * next one on.
 */
export function holdHostHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HOST_HEAP_GROWING_PERCENT}`);
}
