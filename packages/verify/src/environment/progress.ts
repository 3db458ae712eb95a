/**
 * Progress for slow steps: a step that is still running after one second
 * tells the narrator what it is doing, and tells it again when it ends.
 * Quick steps stay silent, so a warm run prints nothing extra.
 */

export interface ProgressEvent {
  readonly step: string;
  readonly phase: 'running' | 'done' | 'failed';
  readonly elapsedMs: number;
}

export type ProgressSink = (event: ProgressEvent) => void;

export const PROGRESS_AFTER_MS = 1000;

export async function withProgress<T>(
  step: string,
  sink: ProgressSink | undefined,
  body: () => Promise<T>,
  clockMs: () => number = Date.now,
): Promise<T> {
  if (sink === undefined) return body();
  const started = clockMs();
  let shown = false;
  const timer = setTimeout(() => {
    shown = true;
    sink({ step, phase: 'running', elapsedMs: clockMs() - started });
  }, PROGRESS_AFTER_MS);
  timer.unref();
  try {
    const value = await body();
    if (shown) sink({ step, phase: 'done', elapsedMs: clockMs() - started });
    return value;
  } catch (error) {
    if (shown) sink({ step, phase: 'failed', elapsedMs: clockMs() - started });
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
