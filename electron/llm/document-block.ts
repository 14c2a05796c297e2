/**
 * A document carried inside a prompt, between `<document name="...">` and
 * `</document>`: a delimiter any model reads as "this is the material", and
 * one the offline model can find, so it works on the document and not on
 * the instructions around it.
 */

/** A document a message carries for the model to work on, as `<document name="...">` ... `</document>`. */
export interface CarriedDocument {
  name: string | null;
  text: string;
}

/** The document in a message's text, or null. The last closing tag ends it, so a document may quote the tags. */
export function carriedDocument(content: string): CarriedDocument | null {
  const open = /<document(?:\s+name="([^"]*)")?\s*>\n?/.exec(content);
  if (!open) return null;
  const start = open.index + open[0].length;
  const end = content.lastIndexOf('</document>');
  if (end < start) return null;
  return { name: open[1] ?? null, text: content.slice(start, end).replace(/\n$/, '') };
}

/** Wrap a document for a prompt, as carriedDocument reads it back. */
export function documentBlock(name: string, text: string): string {
  return `<document name="${name.replaceAll('"', "'")}">\n${text}\n</document>`;
}
