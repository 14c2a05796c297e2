/**
 * The host's hints are written for any terminal: `waystation resume <DIR> t1`.
 * The page knows the directory, so it shows the command a person can paste.
 */

/**
 * Replace `<DIR>` with the open directory, quoted when the shell would split it; unchanged when none is open. The
 * Python library quotes the same way (python/waystation/cli.py, fill_directory).
 */
export function fillDirectory(text: string, root: string | null): string {
  if (!root || !text.includes('<DIR>')) return text;
  const quoted = /^[A-Za-z0-9_./:@%+=,-]+$/.test(root) ? root : `'${root.replaceAll("'", `'\\''`)}'`;
  return text.replaceAll('<DIR>', quoted);
}
