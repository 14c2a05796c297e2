/**
 * When a LangGraph checkpoint was taken: the time it records of itself
 * (`ts`), or else the one its id encodes.
 *
 * Both LangGraphs name checkpoints with UUID version 6, whose first 60 bits
 * are the time in 100-nanosecond steps since 1582-10-15: the id sorts in time
 * order and says when it was made, so History can show every version's time
 * without decoding the checkpoints themselves. But the last checkpoint of a
 * run keeps the id of the one before it (LangGraph's loop reuses it when it
 * exits) with a `ts` of its own, so where `ts` can be had, it is the time.
 */

/** Milliseconds between the UUID epoch (1582-10-15) and the Unix epoch. */
const UUID_EPOCH_OFFSET_MS = 12_219_292_800_000;

/** A checkpoint's `ts` as an ISO time, or null when it is not a time. */
export function timeOf(ts: unknown): string | null {
  if (typeof ts !== 'string') return null;
  const date = new Date(ts);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** The ISO time a version-6 UUID encodes, or null for any other id. */
export function timeOfCheckpointId(id: string): string | null {
  const hex = id.replace(/-/g, '');
  if (!/^[0-9a-f]{12}6[0-9a-f]{19}$/i.test(hex)) return null;
  // The 60-bit time is high * 2^28 + rest; 2^28 = 26,843 * 10,000 + 5,456 splits the division by 10,000 (to
  // milliseconds) into parts that stay exact in doubles, without BigInt (History times every version of a thread).
  const high = Number.parseInt(hex.slice(0, 8), 16);
  const rest = Number.parseInt(hex.slice(8, 12), 16) * 4096 + Number.parseInt(hex.slice(13, 16), 16);
  const ms = high * 26_843 + Math.floor((high * 5_456 + rest) / 10_000) - UUID_EPOCH_OFFSET_MS;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}
