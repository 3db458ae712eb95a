/**
 * Runs the detectors over a text: the gate proposes (detector, start)
 * candidates, and each detector's regex is tried sticky at its start. What a
 * detector reports at a position depends only on the text around it, never
 * on where the scan began, so a stream and a one-shot scan agree.
 */
import type { Detector } from './detector-model.js';
import { DetectorGate, type GateStats } from './gate.js';

export interface RunnableDetector {
  readonly detector: Detector;
  /** The detector's source compiled sticky. */
  readonly regex: RegExp;
}

/** Receives a match: the whole match [matchStart, valueEnd) and its value [valueStart, valueEnd). */
export type DetectorMatchSink = (detector: number, matchStart: number, valueStart: number, valueEnd: number) => void;

/** Counters for tests: gate work and regex attempts. */
export interface DetectorScanStats extends GateStats {
  regexAttempts: number;
}

export class DetectorSet {
  readonly runnable: readonly RunnableDetector[];
  readonly #gate: DetectorGate;

  constructor(detectors: readonly Detector[]) {
    this.runnable = detectors.map((detector) => ({
      detector,
      regex: new RegExp(detector.source, detector.flags.replace('g', 'y')),
    }));
    this.#gate = new DetectorGate(detectors.map((d) => d.anchors));
  }

  /** Every accepted match whose anchor lies in text[from, …). */
  scan(text: string, from: number, sink: DetectorMatchSink, stats?: DetectorScanStats): void {
    if (this.runnable.length === 0) return;
    const runnable = this.runnable;
    // Like a global regex, a detector does not start again inside its own last match: an anchor
    // repeated inside a long match (a PEM body) would otherwise cost one bounded attempt each.
    // Made at the first match only: most texts (a tool result, a model's reply) have none, and one
    // array per scan was most of a short text's cost (the MCP gateway redacts every result).
    let lastEnd: Int32Array | null = null;
    this.#gate.scan(
      text,
      from,
      (index, start) => {
        if (lastEnd !== null && start < lastEnd[index]!) return;
        const { detector, regex } = runnable[index]!;
        if (stats !== undefined) stats.regexAttempts++;
        regex.lastIndex = start;
        const match = regex.exec(text);
        if (match === null) return;
        const context = match[1] ?? '';
        const value = match[2] ?? '';
        if (value.length === 0 || (detector.accept !== null && !detector.accept(value, context))) return;
        const valueStart = match.index + context.length;
        lastEnd ??= new Int32Array(runnable.length).fill(-1);
        lastEnd[index] = valueStart + value.length;
        sink(index, match.index, valueStart, valueStart + value.length);
      },
      stats,
    );
  }
}
