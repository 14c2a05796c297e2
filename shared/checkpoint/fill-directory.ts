/**
 * The host's hints are written for any terminal: `waystation resume <DIR> t1`.
 * The page knows the directory, so it shows the command a person can paste.
 */

/**
 * Replace `<DIR>` with the open directory, quoted when the shell would split it; unchanged when none is open. The
 * Python library quotes the same way (python/waystation/continuation.py, fill_directory).
 */
export function fillDirectory(text: string, root: string | null): string {
  if (!root || !text.includes('<DIR>')) return text;
  return text.replaceAll('<DIR>', shellWord(root));
}

/** `word` as one word of a POSIX shell's command line: as it is when the shell would not split it, single-quoted otherwise. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
