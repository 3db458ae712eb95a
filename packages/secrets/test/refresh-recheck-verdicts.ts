/**
 * Rewrites recheck-verdicts.json by fuzzing every detector pattern afresh:
 * `node --conditions=source --import tsx packages/secrets/test/refresh-recheck-verdicts.ts`.
 */
import { DETECTORS } from '../src/index.js';
import { rememberVerdicts } from './recheck-verdicts.js';

rememberVerdicts([...new Map(DETECTORS.map((d) => [`${d.flags}/${d.source}`, d])).values()]);
