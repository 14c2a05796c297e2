/**
 * The coalescing of a store's announcements: a lone change goes out at once,
 * changes close together go out as one naming each task once, never two
 * announcements under way at a time, and flush sends what is waiting. The
 * clock and the sends are the test's own; the database side is in
 * postgres-listing.test.ts.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ChangeAnnouncer } from '../../../../electron/store/postgres/change-announcer.js';

/** A send the test settles by hand, recording what each announcement named. */
function manualSends() {
  const sent: string[][] = [];
  const settle: (() => void)[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const send = (ids: readonly string[]) => {
    sent.push([...ids]);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    return new Promise<void>((resolve) =>
      settle.push(() => {
        inFlight--;
        resolve();
      }),
    );
  };
  return { send, sent, settle, maxInFlight: () => maxInFlight };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('ChangeAnnouncer', () => {
  it('sends a lone change at once', () => {
    const s = manualSends();
    const a = new ChangeAnnouncer(s.send, 10, () => 1000);
    a.add(['t']);
    expect(s.sent).toEqual([['t']]);
  });

  it('holds changes made while one is under way, and sends them together, each task once, when it ends', async () => {
    let now = 0;
    const s = manualSends();
    const a = new ChangeAnnouncer(s.send, 10, () => now);
    a.add(['a']);
    a.add(['b']);
    a.add(['a', 'c']);
    expect(s.sent).toEqual([['a']]);
    now = 20;
    s.settle[0]();
    await tick();
    expect(s.sent).toEqual([['a'], ['b', 'a', 'c']]);
    expect(s.maxInFlight()).toBe(1);
  });

  it('waits out the interval after the last start before sending again', async () => {
    let now = 0;
    const s = manualSends();
    const a = new ChangeAnnouncer(s.send, 30, () => now);
    a.add(['a']);
    s.settle[0]();
    await tick();
    now = 5;
    a.add(['b']);
    expect(s.sent).toEqual([['a']]);
    // The timer fires when the interval since the first start is over (30 ms of real time here, the clock moved on).
    now = 40;
    await new Promise((r) => setTimeout(r, 60));
    expect(s.sent).toEqual([['a'], ['b']]);
  });

  it('flush sends what is waiting without waiting out the interval, and waits for it', async () => {
    const s = manualSends();
    const a = new ChangeAnnouncer(s.send, 60_000, () => 0);
    a.add(['a']);
    a.add(['b']);
    let flushed = false;
    const done = a.flush().then(() => (flushed = true));
    s.settle[0]();
    await tick();
    expect(s.sent).toEqual([['a'], ['b']]);
    expect(flushed).toBe(false);
    s.settle[1]();
    await done;
    expect(flushed).toBe(true);
  });

  it('a failed send does not stop the next one', async () => {
    let now = 0;
    const sent: string[][] = [];
    const a = new ChangeAnnouncer(
      (ids) => {
        sent.push([...ids]);
        return sent.length === 1 ? Promise.reject(new Error('connection refused')) : Promise.resolve();
      },
      10,
      () => now,
    );
    a.add(['a']);
    a.add(['b']);
    now = 20;
    await a.flush();
    expect(sent).toEqual([['a'], ['b']]);
  });

  it('property: every task changed is named by an announcement that starts after its change, one under way at a time', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            ids: fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { minLength: 1, maxLength: 3 }),
            advance: fc.nat(25),
            settle: fc.boolean(),
          }),
          {
            minLength: 1,
            maxLength: 30,
          },
        ),
        async (changes) => {
          let now = 0;
          const s = manualSends();
          const a = new ChangeAnnouncer(s.send, 10, () => now);
          // For each change: the number of announcements begun before it; one begun after must name each of its tasks.
          const after: { ids: string[]; sentBefore: number }[] = [];
          for (const c of changes) {
            now += c.advance;
            after.push({ ids: c.ids, sentBefore: s.sent.length });
            a.add(c.ids);
            if (c.settle) for (const settle of s.settle.splice(0)) settle();
            await tick();
          }
          let flushed = false;
          void a.flush().then(() => (flushed = true));
          while (!flushed) {
            for (const settle of s.settle.splice(0)) settle();
            await tick();
          }
          expect(s.maxInFlight()).toBe(1);
          for (const { ids, sentBefore } of after)
            for (const id of ids) expect(s.sent.slice(sentBefore).some((named) => named.includes(id))).toBe(true);
          for (const named of s.sent) expect(new Set(named).size).toBe(named.length);
        },
      ),
      { numRuns: 100 },
    );
  });
});
