/**
 * An extractive summary of a Markdown document: its title and the sentences
 * that carry most of its content, chosen by a fixed rule, so the same file
 * always gives the same summary (the offline model's answer to
 * "summarise this document", see docs/RUNTIME.md).
 *
 * The rule:
 * 1. Prose only: front matter, fenced and indented code, HTML, tables and
 *    link targets are dropped; headings are kept apart as the outline; list
 *    items and paragraphs are split into sentences at . ! ? 。！？ and
 *    line breaks between items.
 * 2. Words are found with the locale-independent word segmenter (so Chinese
 *    text, written without spaces, is split into words too), lower-cased,
 *    without stop words and one-letter Latin words.
 * 3. A word's weight is its count in the prose, plus 2 for each heading it
 *    appears in, divided by the largest such count.
 * 4. A sentence scores the sum of its words' weights divided by the square
 *    root of its word count (long sentences do not win by length alone),
 *    times 1.5 when it opens its section and times 1 + 0.25 (1 - i / n) for
 *    the i-th of n sentences (earlier is likelier to state the point).
 *    Sentences of fewer than three words are not chosen while longer ones
 *    remain.
 * 5. The best ceil(n / 6) sentences, at least 2 and at most 5 (ties to the
 *    earlier), are printed in document order after the title, then the
 *    section headings.
 */

/** What the summary is made of, for callers that lay it out themselves. */
export interface ExtractiveSummary {
  /** The first level-1 heading, else the first heading, else the fallback (a file name). */
  title: string;
  /** The chosen sentences, in document order. */
  sentences: string[];
  /** The headings below the title, in order. */
  sections: string[];
  /** Words of prose in the document. */
  words: number;
}

interface Sentence {
  text: string;
  words: string[];
  opensSection: boolean;
}

const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his how i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this those to too was we were what ' +
    'when where which while who why will with would you your also just about over only such each any all more most other ' +
    '的 了 是 在 和 与 及 也 就 都 而 这 那 有 个 一个 我 你 他 她 它 们 我们 你们 他们 之 以 于 为 对 把 被 让 从 到 中 上 下 吗 呢 吧 啊 并 或'
  ).split(' '),
);

/**
 * Made on first use: building a word segmenter loads ICU's word-break data, some 13 ms, which every process that
 * imports this module (the CLI, every worker) would otherwise pay at start whether or not it summarises anything.
 */
let wordSegmenter: Intl.Segmenter | undefined;

/** How much text the segmenter is given at once (see segmentPieces). */
export const SEGMENT_PIECE = 2048;

/**
 * `text` in pieces of about SEGMENT_PIECE characters, cut only after whitespace, which no word spans, so the words
 * are those of the whole. V8's segmenter copies its whole input into every segment it yields, so one long sentence
 * segmented at once costs the square of its length: 16,000 words took 1.9 s, pieces take milliseconds. A run
 * without whitespace longer than a piece (Chinese text with no full stop, a blob) stays whole.
 */
export function segmentPieces(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (text.length - start > SEGMENT_PIECE) {
    let cut = start + SEGMENT_PIECE;
    while (cut > start && !/\s/.test(text[cut - 1])) cut--;
    if (cut === start) {
      // No whitespace in the piece: cut after the next one, if any.
      const next = text.slice(start + SEGMENT_PIECE).search(/\s/);
      if (next < 0) break;
      cut = start + SEGMENT_PIECE + next + 1;
    }
    pieces.push(text.slice(start, cut));
    start = cut;
  }
  pieces.push(text.slice(start));
  return pieces;
}

/** The content words of a piece of text, lower-cased. */
function contentWords(text: string): string[] {
  wordSegmenter ??= new Intl.Segmenter('und', { granularity: 'word' });
  const out: string[] = [];
  for (const piece of segmentPieces(text)) {
    for (const s of wordSegmenter.segment(piece)) {
      if (!s.isWordLike) continue;
      const w = s.segment.toLowerCase();
      if (STOP_WORDS.has(w) || /^\p{Number}+$/u.test(w) || /^[a-z]$/.test(w)) continue;
      out.push(w);
    }
  }
  return out;
}

/** Inline Markdown to plain text: images and HTML gone, links to their text, code and emphasis unmarked. */
function plainInline(text: string): string {
  return text
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__|\*|_|~~)(\S(?:.*?\S)?)\1/g, '$2')
    .replace(/\s+/g, ' ')
    .trim();
}

const SENTENCE_END = /(?<=[.!?])\s+(?=\S)|(?<=[。！？])/u;

/** Split a block of prose into sentences. */
function splitSentences(block: string): string[] {
  return block
    .split(SENTENCE_END)
    .map((s) => s.trim())
    .filter((s) => /[\p{Letter}\p{Number}]/u.test(s));
}

interface Parsed {
  headings: { level: number; text: string }[];
  sentences: Sentence[];
}

/** Walk the document's lines: headings to the outline, prose blocks to sentences. */
function parse(markdown: string): Parsed {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  // Front matter only at the very top, closed by --- or ...
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((l, j) => j > 0 && /^(---|\.\.\.)\s*$/.test(l));
    if (end > 0) i = end + 1;
  }
  const headings: Parsed['headings'] = [];
  const sentences: Sentence[] = [];
  let block: string[] = [];
  let sectionOpen = true;
  const flush = () => {
    const text = plainInline(block.join(' '));
    block = [];
    for (const s of splitSentences(text)) {
      sentences.push({ text: s, words: contentWords(s), opensSection: sectionOpen });
      sectionOpen = false;
    }
  };
  let fence: string | null = null;
  for (; i < lines.length; i++) {
    const line = lines[i];
    const fenceMark = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence !== null) {
      if (fenceMark && fenceMark[1][0] === fence[0] && fenceMark[1].length >= fence.length) fence = null;
      continue;
    }
    if (fenceMark) {
      flush();
      fence = fenceMark[1];
      continue;
    }
    const atx = /^\s{0,3}(#{1,6})\s+(.*?)(\s+#+\s*)?$/.exec(line);
    const setext = !atx && block.length === 1 && /^\s{0,3}(=+|-+)\s*$/.test(line) ? block.pop() : undefined;
    if (atx || setext !== undefined) {
      flush();
      const level = atx ? atx[1].length : line.trim().startsWith('=') ? 1 : 2;
      const text = plainInline(atx ? atx[2] : (setext ?? ''));
      if (text) headings.push({ level, text });
      sectionOpen = true;
      continue;
    }
    if (/^\s*$/.test(line) || /^\s*(\|.*\||[-*_]{3,}\s*)$/.test(line) || /^(\t| {4})/.test(line) || /^\s*<\/?[a-zA-Z!]/.test(line)) {
      flush();
      continue;
    }
    const item = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (item) {
      // Each list item is a sentence of its own, even without a full stop.
      flush();
      block.push(item[1]);
      flush();
      continue;
    }
    block.push(line.replace(/^\s*>\s?/, ''));
  }
  flush();
  return { headings, sentences };
}

/** How many sentences a document of `n` sentences is summarised in. */
export function summaryLength(n: number): number {
  return Math.min(n, Math.max(2, Math.min(5, Math.ceil(n / 6))));
}

/** Summarise a Markdown document by the rule above; `fallbackTitle` names a document without headings. */
export function summarizeMarkdown(markdown: string, fallbackTitle = 'Untitled'): ExtractiveSummary {
  const { headings, sentences } = parse(markdown);
  const titleHeading = headings.find((h) => h.level === 1) ?? headings[0];
  const title = titleHeading?.text ?? fallbackTitle;
  const sections = headings.filter((h) => h !== titleHeading).map((h) => h.text);

  const counts = new Map<string, number>();
  for (const s of sentences) for (const w of s.words) counts.set(w, (counts.get(w) ?? 0) + 1);
  for (const h of headings) for (const w of new Set(contentWords(h.text))) counts.set(w, (counts.get(w) ?? 0) + 2);
  // A loop, not Math.max(...counts): spread into arguments, some 120,000 distinct words overflow the stack.
  let top = 1;
  for (const c of counts.values()) if (c > top) top = c;

  const n = sentences.length;
  const scored = sentences.map((s, i) => {
    const weight = s.words.reduce((sum, w) => sum + (counts.get(w) ?? 0) / top, 0);
    const base = s.words.length === 0 ? 0 : weight / Math.sqrt(s.words.length);
    return { i, long: s.words.length >= 3, score: base * (s.opensSection ? 1.5 : 1) * (1 + 0.25 * (1 - i / n)) };
  });
  scored.sort((a, b) => Number(b.long) - Number(a.long) || b.score - a.score || a.i - b.i);
  const chosen = scored
    .slice(0, summaryLength(n))
    .map((s) => s.i)
    .sort((a, b) => a - b);
  return {
    title,
    sentences: chosen.map((i) => sentences[i].text),
    sections,
    words: sentences.reduce((sum, s) => sum + s.words.length, 0),
  };
}

/** The summary as text: the title, the chosen sentences as one paragraph, the sections. */
export function formatSummary(summary: ExtractiveSummary): string {
  const paragraph = summary.sentences.reduce((text, s) => (text === '' ? s : /[。！？]$/u.test(text) ? `${text}${s}` : `${text} ${s}`), '');
  const lines = [summary.title, '', paragraph || 'The document has no prose to summarise.'];
  if (summary.sections.length > 0) lines.push('', `Sections: ${summary.sections.join('; ')}.`);
  return lines.join('\n');
}
