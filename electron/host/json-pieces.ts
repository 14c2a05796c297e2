/**
 * The JSON text of an array, made and sent a piece at a time.
 *
 * A listing of 10,000 tasks is 3.8 MiB of JSON (9.6 MiB with the plans):
 * turned to text at once, each answer is one string that size, and a copy of
 * it in native memory while the socket takes it. A few answers in a row grew
 * the host's resident memory by tens of MiB (the JavaScript heap and the
 * allocator's arenas both grow to hold them, and neither gives much back). In
 * pieces of about 64 KiB, each made when the socket has taken the one before,
 * an answer holds one piece at a time.
 */

/** About how many characters of JSON text a piece holds: one row may take it over. */
const JSON_PIECE_CHARS = 64 * 1024;

/**
 * The JSON text of `items` (each turned to text by `toJson`), in pieces of
 * about `pieceChars` characters, each made only when asked for. Joined, the
 * pieces are exactly the text of the whole array.
 */
export function* jsonArrayPieces<T>(
  items: readonly T[],
  // As JSON.stringify writes an array's item: what has no JSON text (undefined, a function) is null.
  toJson: (item: T) => string = (item) => (JSON.stringify(item) as string | undefined) ?? 'null',
  pieceChars = JSON_PIECE_CHARS,
): Generator<string> {
  let piece = '[';
  for (let i = 0; i < items.length; i++) {
    piece += (i > 0 ? ',' : '') + toJson(items[i]);
    if (piece.length >= pieceChars) {
      yield piece;
      piece = '';
    }
  }
  yield `${piece}]`;
}
