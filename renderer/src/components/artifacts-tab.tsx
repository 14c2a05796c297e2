/** Artifacts with their check against the disk, and a re-verify. */
import { useShallow } from 'zustand/react/shallow';
import type { VerifyResult } from '../../../shared/api/contract.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { useAppStore } from '../store/app-store.js';
import { StatusBadge } from './status-badge.js';
import { formatBytes } from './format.js';
import { PathText } from './path-text.js';

/** `blocked`: why a verify cannot be asked for now (the host out of reach), or null. */
export function ArtifactsTab({ checkpoint, blocked = null }: { checkpoint: Checkpoint; blocked?: string | null }) {
  const { report, state, error } = useAppStore(useShallow((s) => ({ report: s.verifyReport, state: s.verifyState, error: s.verifyError })));
  const verify = useAppStore((s) => s.verify);
  const checks = new Map((report?.artifacts ?? []).map((a) => [a.path, a]));
  // The host's verify answer carries, when a crash or a power cut left something behind, what it lost.
  const recovery = (report as VerifyResult | null)?.recovery;

  return (
    <div>
      <div className="panel-toolbar">
        <span className="muted">
          {report
            ? report.drift
              ? 'Some artifacts no longer match what the checkpoint recorded.'
              : `All artifacts match (checked against version ${report.version}).`
            : 'Not verified yet: compare the recorded hashes with the files on disk.'}
        </span>
        <span className="spacer" />
        <button
          type="button"
          onClick={() => void verify()}
          disabled={state === 'loading' || blocked !== null}
          title={blocked ?? undefined}
          aria-busy={state === 'loading'}
        >
          {state === 'loading' ? (
            <>
              <span className="spinner" aria-hidden="true" /> Verifying…
            </>
          ) : report ? (
            'Re-verify'
          ) : (
            'Verify'
          )}
        </button>
      </div>
      {error && (
        <p role="alert" className="error-text">
          Verification failed: {error}
        </p>
      )}
      {recovery && (
        <section aria-label="Recovery after an interruption" className="warn-text">
          <strong>Recovery after an interruption</strong>
          <ul>
            {recovery.account.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </section>
      )}
      {checkpoint.artifacts.length === 0 ? (
        <p className="empty-inline">No artifacts recorded: this task has not written any files yet.</p>
      ) : (
        // Words stay whole; a path breaks after its separators, the hash anywhere (path-text.tsx).
        <table className="grid artifacts-table" aria-label="Artifacts">
          <thead>
            <tr>
              <th scope="col">Path</th>
              <th scope="col">Type</th>
              <th scope="col">Step</th>
              <th scope="col">Size</th>
              <th scope="col">sha256</th>
              <th scope="col">On disk</th>
            </tr>
          </thead>
          <tbody>
            {checkpoint.artifacts.map((a) => {
              const check = checks.get(a.path);
              return (
                <tr key={a.path}>
                  <td className="mono">
                    <PathText text={a.path} />
                  </td>
                  <td>{a.type}</td>
                  <td className="mono">{a.step_id ? <PathText text={a.step_id} /> : '—'}</td>
                  <td className="nowrap">{formatBytes(a.size)}</td>
                  <td className="mono hash" title={a.sha256}>
                    {a.sha256.slice(0, 12)}…
                  </td>
                  <td title={check?.message}>
                    <StatusBadge status={check?.status ?? 'unverified'} />
                    {check && check.status !== 'ok' && (
                      <div className="muted small">
                        <PathText text={check.message} />
                      </div>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {report && report.uncertain_effects.length > 0 && (
        <p className="warn-text">
          {report.uncertain_effects.length} side effect{report.uncertain_effects.length === 1 ? ' is' : 's are'} uncertain: see Side
          effects.
        </p>
      )}
    </div>
  );
}
