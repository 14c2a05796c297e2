/**
 * A path (or a line of text holding paths and ids) that wraps where a reader
 * expects it to: after a separator (`/`, `\`, `:`, `.`, `_`, `-`), never
 * inside a word. Only a run too long to fit any line (a hash, a name of 100
 * characters with no separator) may break anywhere, and only that run.
 *
 * `overflow-wrap: anywhere` on a whole table cell let the table squeeze its
 * column to one character and broke "summary" and "Modified" mid-word.
 */
import { Fragment } from 'react';

/** Longer than this with no separator: a run that may break anywhere rather than widen the table. */
const LONG_RUN = 24;

/** The pieces of `text`: each ends after a separator or a space, so a break may follow it. */
function pieces(text: string): string[] {
  return text.match(/[^/\\:._\s-]*[/\\:._\s-]*/g)?.filter((p) => p !== '') ?? [];
}

export function PathText({ text }: { text: string }) {
  return (
    <>
      {pieces(text).map((piece, i) => (
        <Fragment key={i}>
          {piece.trimEnd().length > LONG_RUN ? <span className="break-anywhere">{piece}</span> : piece}
          {/[/\\:._-]$/.test(piece) && <wbr />}
        </Fragment>
      ))}
    </>
  );
}
