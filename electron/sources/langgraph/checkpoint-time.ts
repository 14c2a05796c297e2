/**
 * When a LangGraph checkpoint was taken, from its id.
 *
 * Both LangGraphs name checkpoints with UUID version 6, whose first 60 bits
 * are the time in 100-nanosecond steps since 1582-10-15: the id sorts in time
 * order and says when it was written, so History can show every version's
 * time without decoding the checkpoints themselves.
 */

/** Milliseconds between the UUID epoch (1582-10-15) and the Unix epoch. */
const UUID_EPOCH_OFFSET_MS = 12_219_292_800_000;

/** The ISO time a version-6 UUID encodes, or null for any other id. */
export function timeOfCheckpointId(id: string): string | null {
  const hex = id.replace(/-/g, '');
  if (!/^[0-9a-f]{12}6[0-9a-f]{19}$/i.test(hex)) return null;
  const t = (BigInt(`0x${hex.slice(0, 8)}`) << 28n) | (BigInt(`0x${hex.slice(8, 12)}`) << 12n) | BigInt(`0x${hex.slice(13, 16)}`);
  const ms = Number(t / 10_000n) - UUID_EPOCH_OFFSET_MS;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}
