/**
 * The signal a daemon job runs under: aborted when the daemon stops the job
 * (with the daemon's reason, so a kill stays a kill) or when the job's own
 * time limit runs out. A plain timer and controller held here, not
 * `AbortSignal.any([stop, AbortSignal.timeout(ms)])`: on Node 20 the timeout
 * signal inside `any()` is held only weakly, and once a garbage collection
 * takes it, it never fires (a job's `timeoutSeconds` was silently ignored).
 */
export interface JobStopSignal {
  readonly signal: AbortSignal;
  /** Clears the timer and the listener; call when the job ends. */
  dispose(): void;
}

export function jobStopSignal(stop: AbortSignal, timeoutMs: number): JobStopSignal {
  const controller = new AbortController();
  const onStop = (): void => controller.abort(stop.reason);
  const timer = setTimeout(
    () => controller.abort(new DOMException(`the job's time limit (${timeoutMs} ms) ran out`, 'TimeoutError')),
    timeoutMs,
  );
  if (stop.aborted) onStop();
  else stop.addEventListener('abort', onStop, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      stop.removeEventListener('abort', onStop);
    },
  };
}
