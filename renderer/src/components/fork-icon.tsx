/**
 * The mark of a fork beside its links and tags: drawn, since no font can be counted on to hold a fork symbol
 * (U+2442 is in none of Debian's default fonts, and showed as an empty box).
 */
export function ForkIcon() {
  return (
    <svg className="fork-icon" viewBox="0 0 12 12" width="0.9em" height="0.9em" aria-hidden="true" focusable="false">
      <g fill="none" stroke="currentColor" strokeWidth="1.4" strokeLinecap="round">
        <circle cx="3" cy="2.5" r="1.4" />
        <circle cx="9" cy="2.5" r="1.4" />
        <circle cx="3" cy="9.5" r="1.4" />
        <path d="M3 3.9v4.2M9 3.9c0 2.6-6 2-6 4.2" />
      </g>
    </svg>
  );
}
