/** What every `crustcore mcp` registry action works with, and its two exits. */
import type { GatewayError, RegistryFile } from '@crustcore/mcp-gateway';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';

export type GatewayPack = typeof import('@crustcore/mcp-gateway');

/** The parsed options (node:util parseArgs values). */
export interface RegistryValues {
  readonly url?: string | undefined;
  readonly env?: readonly string[] | undefined;
  readonly auth?: string | undefined;
  readonly repo?: readonly string[] | undefined;
  readonly 'any-repo'?: boolean | undefined;
  readonly policy?: string | undefined;
  readonly timeout?: string | undefined;
  readonly 'read-path'?: readonly string[] | undefined;
  readonly from?: string | undefined;
  readonly format?: string | undefined;
  readonly project?: string | undefined;
  readonly yes?: boolean | undefined;
  readonly json?: boolean | undefined;
}

export interface RegistryContext {
  readonly pack: GatewayPack;
  readonly io: Io;
  readonly path: string;
  readonly registry: RegistryFile;
  readonly values: RegistryValues;
  readonly positionals: readonly string[];
  /** After `--`: a stdio server's command and arguments. */
  readonly command: readonly string[];
}

export const fail = (io: Io, error: GatewayError): ExitCode => {
  writeLine(io.stderr, `crustcore mcp: ${error.message}`);
  return error._tag === 'Io' ? ExitCode.internal : ExitCode.usage;
};

export function save(context: RegistryContext, registry: RegistryFile): ExitCode {
  const written = context.pack.writeRegistry(context.path, registry);
  return written._tag === 'Left' ? fail(context.io, written.left) : ExitCode.ok;
}
