/**
 * Accessible tabs: arrow keys move between tabs (WAI-ARIA tabs pattern),
 * only the active tab is in the tab order. Only the active panel is rendered
 * (the others may be costly), so only the active tab names a panel it controls.
 */
import { useRef, type KeyboardEvent, type ReactNode } from 'react';

export interface TabDef<T extends string> {
  id: T;
  label: string;
  count?: number;
  /** Marks a tab whose content needs attention (failed steps, drift). */
  alert?: boolean;
}

export function Tabs<T extends string>({
  tabs,
  active,
  onChange,
  label,
  children,
}: {
  tabs: TabDef<T>[];
  active: T;
  onChange(id: T): void;
  label: string;
  children: ReactNode;
}) {
  const refs = useRef<Record<string, HTMLButtonElement | null>>({});
  const onKeyDown = (e: KeyboardEvent) => {
    const i = tabs.findIndex((t) => t.id === active);
    const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    const tab = tabs[(next + tabs.length) % tabs.length];
    onChange(tab.id);
    refs.current[tab.id]?.focus();
  };
  return (
    <div className="tabs">
      <div role="tablist" aria-label={label} className="tablist" onKeyDown={onKeyDown}>
        {tabs.map((t) => (
          <button
            key={t.id}
            ref={(el) => {
              refs.current[t.id] = el;
            }}
            role="tab"
            type="button"
            id={`tab-${t.id}`}
            aria-selected={t.id === active}
            // Only the active tab's panel is rendered; an inactive tab pointing at a missing panel would be a broken reference.
            aria-controls={t.id === active ? `panel-${t.id}` : undefined}
            tabIndex={t.id === active ? 0 : -1}
            className="tab"
            onClick={() => onChange(t.id)}
          >
            {t.label}
            {t.count !== undefined && <span className={`tab-count${t.alert ? ' alert' : ''}`}>{t.count}</span>}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${active}`} aria-labelledby={`tab-${active}`} className="tabpanel" tabIndex={0}>
        {children}
      </div>
    </div>
  );
}
