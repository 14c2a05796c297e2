/**
 * How far the host process lets V8's heap grow: its old generation between
 * full collections, and its young generation at all.
 *
 * The host keeps little (its heap is 40 to 56 MiB after a collection, 10,000
 * tasks listed and watched) but makes a great deal that dies young: building
 * that list makes about 300 MiB of objects, and each listing it answers
 * several MiB more.
 *
 * The old generation: V8 sets the heap's next limit at each full collection,
 * as what survived times a factor it raises up to 4 while a program allocates
 * fast, so after the build the heap kept growing with no full collection at
 * all, to over 100 MiB for 40 to 55 MiB of live objects (`--trace-gc-nvp`),
 * and the host over its target of 1.5 times the memory of a process keeping
 * every parsed checkpoint. A factor held at 1.3 costs more full collections
 * while a list is built: the first listing of 10,000 tasks a median of 15%
 * later (1,166 against 1,011 ms), against a peak 20 to 40 MiB lower.
 *
 * The young generation: V8 doubles it while much of what it allocates
 * survives, as the list's build does, up to 32 MiB, all of it resident once
 * used. Its largest size is fixed when the process starts
 * (`--max-semi-space-size`, on the command line that starts Node, which a user
 * types); a running process can only stop its growth (the growth factor,
 * which V8 reads each time it grows it). The host looks after each young
 * collection (Node reports them once the running code yields) and stops the
 * growth at 16 MiB: 10,000 tasks listed, `waystation serve`'s peak is some
 * 20 MiB lower (a median of 150 against 170 MiB) for a listing and first
 * rows as fast. Stopped at 8 MiB its peak was no lower and the first rows
 * on a cold host came some 200 ms later; at 1 MiB, where it starts, the first
 * listing took 15% longer (docs/BENCHMARKS.md, issue 21).
 */
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

/** Percent by which the heap may grow over what survived the last full collection. */
export const HOST_HEAP_GROWING_PERCENT = 30;

/** The young generation's size (both of its halves) at which it stops growing. */
export const HOST_YOUNG_GENERATION_BYTES = 16 * 1024 * 1024;

/** The young generation's size now: what V8 calls `new_space`. */
export function youngGenerationBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

/** V8's own growth factor: the young generation doubles when it grows. */
const V8_SEMI_SPACE_GROWTH_FACTOR = 2;

let held = false;

/**
 * Hold this process's heap as the module's comment says: the old
 * generation's growth to HOST_HEAP_GROWING_PERCENT from the next full
 * collection on, the young generation's to HOST_YOUNG_GENERATION_BYTES. For a
 * process that hosts the inspector (`waystation serve`, the desktop app's main
 * process); once a process, however many hosts it starts.
 */
export function holdHostHeapGrowth(): void {
  if (held) return;
  held = true;
  v8.setFlagsFromString(`--heap-growing-percent=${HOST_HEAP_GROWING_PERCENT}`);
  // The young generation grows only at a young collection, so that is when to look. Looked at after each one, not
  // stopped once for good: V8 shrinks it again while the host is idle, and a listing after that may grow it back.
  let factor = V8_SEMI_SPACE_GROWTH_FACTOR;
  const look = () => {
    const next = youngGenerationBytes() >= HOST_YOUNG_GENERATION_BYTES ? 1 : V8_SEMI_SPACE_GROWTH_FACTOR;
    if (next === factor) return;
    factor = next;
    v8.setFlagsFromString(`--semi-space-growth-factor=${factor}`);
  };
  look();
  new PerformanceObserver(look).observe({ entryTypes: ['gc'] });
}
