/**
 * Detectors for credentials nobody registered: well-known token formats and
 * secret-looking assignments. Registered secrets are matched exactly (see
 * matcher.ts); detectors are the safety net for keys that arrive from
 * elsewhere (a tool prints a token it found, a config file is read).
 *
 * Every pattern has two capture groups: (context kept visible)(value
 * redacted), and a hard upper bound on its match length, which is what lets
 * the streaming redactor hold back a bounded tail; the few patterns whose
 * bound is large (PEM blocks, JWTs, macaroons) also name a literal every
 * match starts with, so a stream holds back from that literal only when it
 * actually appears. Patterns run sticky at anchor positions (gate.ts).
 *
 * The catalogs: token-formats.ts (shape-recognised provider tokens) and
 * context-detectors.ts (values that need their surroundings).
 */
import { CONTEXT_DETECTORS } from './context-detectors.js';
import { DETECTOR_IDS, type DetectorId } from './detector-ids.js';
import type { Detector } from './detector-model.js';
import { TOKEN_FORMAT_DETECTORS } from './token-formats.js';

export { DETECTOR_IDS, type DetectorId } from './detector-ids.js';
export type { Anchor, Detector } from './detector-model.js';
export {
  characterClassCount,
  looksLikeExampleToken,
  looksLikePlaceholder,
  looksRandom,
  shannonEntropy,
} from './value-checks.js';

const rank = (id: DetectorId): number => DETECTOR_IDS.indexOf(id);

/** All detectors, in label order (a format may have several detectors under one id). */
export const DETECTORS: readonly Detector[] = [...TOKEN_FORMAT_DETECTORS, ...CONTEXT_DETECTORS]
  .map((detector, index) => ({ detector, index }))
  .sort((a, b) => rank(a.detector.id) - rank(b.detector.id) || a.index - b.index)
  .map(({ detector }) => detector);

export const detectorById = (id: DetectorId): Detector => {
  const found = DETECTORS.find((d) => d.id === id);
  if (found === undefined) throw new Error(`unknown detector ${id}`);
  return found;
};
