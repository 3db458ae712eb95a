/**
 * The registry file: `$CRUSTCORE_HOME/mcp/servers.json` (0600 in a 0700
 * directory). Read and decoded whole every time; written atomically (temp
 * file + rename) so a crash leaves the old or the new registry, never half.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { describeDecodeErrors, type GatewayError, gatewayError } from '../errors.js';
import { REGISTRY_VERSION, type RegistryFile, RegistryFileC, type ServerRecord } from './server-record.js';

const MAX_REGISTRY_BYTES = 4 * 1024 * 1024;

/** Where the registry of a CrustCore home lives. */
export const registryPath = (home: string): string => join(home, 'mcp', 'servers.json');

export const emptyRegistry = (): RegistryFile => ({ version: REGISTRY_VERSION, servers: [] });

export function readRegistry(path: string): Result<GatewayError, RegistryFile> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ok(emptyRegistry());
    return err(gatewayError('Io', `cannot read ${path}: ${(error as Error).message}`));
  }
  return decodeRegistry(path, bytes);
}

/** The registry in `bytes` (the file at `path`, named in the errors). */
export function decodeRegistry(path: string, bytes: Buffer): Result<GatewayError, RegistryFile> {
  if (bytes.length > MAX_REGISTRY_BYTES)
    return err(
      gatewayError('BadRegistryFile', `${path} is larger than 4 MiB; remove it and add servers again`, { path }),
    );
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    return err(
      gatewayError('BadRegistryFile', `${path} is not JSON (${(error as Error).message}); fix or remove it`, { path }),
    );
  }
  const decoded = RegistryFileC.decode(raw);
  if (decoded._tag === 'Left') {
    const problems = describeDecodeErrors(decoded.left);
    return err(
      gatewayError(
        'BadRegistryFile',
        `${path}: ${problems}; fix the entry or remove it with \`crustcore mcp remove NAME\``,
        { path },
      ),
    );
  }
  return ok(decoded.right);
}

export function writeRegistry(path: string, registry: RegistryFile): Result<GatewayError, void> {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const temp = `${path}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(RegistryFileC.encode(registry), null, 2)}\n`, { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, path);
    return ok(undefined);
  } catch (error) {
    return err(gatewayError('Io', `cannot write ${path}: ${(error as Error).message}`));
  }
}

export const findServer = (registry: RegistryFile, name: string): ServerRecord | undefined =>
  registry.servers.find((server) => server.name === name);

/** Adds a record; a name already taken is an error unless `replace`. */
export function addServer(
  registry: RegistryFile,
  record: ServerRecord,
  replace = false,
): Result<GatewayError, RegistryFile> {
  const exists = findServer(registry, record.name) !== undefined;
  if (exists && !replace)
    return err(
      gatewayError('DuplicateServer', `a server named ${record.name} exists; remove it first or pick another name`),
    );
  const servers = registry.servers.filter((server) => server.name !== record.name);
  return ok({ ...registry, servers: [...servers, record] });
}

export function removeServer(registry: RegistryFile, name: string): Result<GatewayError, RegistryFile> {
  if (findServer(registry, name) === undefined)
    return err(
      gatewayError('UnknownServer', `no server named ${name}; \`crustcore mcp list\` shows the registered ones`),
    );
  return ok({ ...registry, servers: registry.servers.filter((server) => server.name !== name) });
}

export const replaceServer = (registry: RegistryFile, record: ServerRecord): RegistryFile => ({
  ...registry,
  servers: registry.servers.map((server) => (server.name === record.name ? record : server)),
});
