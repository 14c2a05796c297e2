// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render } from '@testing-library/react';
import { PathText } from '../../renderer/src/components/path-text.js';

afterEach(cleanup);

/** The text as rendered, with `|` where a line may break (a <wbr>) and `[...]` around a run that may break anywhere. */
function breaks(text: string): string {
  const { container } = render(
    <span>
      <PathText text={text} />
    </span>,
  );
  const span = container.firstElementChild!;
  let out = '';
  for (const node of span.childNodes) {
    if (node.nodeName === 'WBR') out += '|';
    else if (node.nodeType === node.ELEMENT_NODE) out += `[${node.textContent}]`;
    else out += node.textContent;
  }
  return out;
}

describe('PathText', () => {
  it('lets a path break after its separators only, words whole', () => {
    expect(breaks('outputs/notes-drifted/checkpoints.summary.md')).toBe('outputs/|notes-|drifted/|checkpoints.|summary.|md');
    expect(breaks('summarize:checkpoints.md')).toBe('summarize:|checkpoints.|md');
  });

  it('leaves the words of a sentence to break at their spaces, and its paths at their separators', () => {
    expect(breaks('outputs/a.md is 203 bytes, 135 were recorded')).toBe('outputs/|a.|md is 203 bytes, 135 were recorded');
  });

  it('lets only a run too long for a line, a hash say, break anywhere', () => {
    const sha = 'ab'.repeat(32);
    expect(breaks(`sha256 ${sha} was recorded`)).toBe(`sha256 [${sha} ]was recorded`);
  });
});
