/**
 * The example registry shipped with the package (src/default-models.json),
 * decoded through the same io-ts path as a user's file: it gets no trust
 * for being ours.
 */
import type { Result } from '@crustcore/kernel';
import defaultFile from '../default-models.json' with { type: 'json' };
import { decodeRegistry, type ModelRegistry, type RegistryError } from './config.js';

export const defaultRegistry = (): Result<RegistryError, ModelRegistry> => decodeRegistry(defaultFile);

/** The example file's text, for `crustcore models --json` users who want to start their own copy. */
export const defaultRegistryText = (): string => `${JSON.stringify(defaultFile, null, 2)}\n`;
