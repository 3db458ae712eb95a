/**
 * The registry the user's own npm configuration names (`npm config get
 * registry` in their checkout, so project and user .npmrc both count). The
 * setup proxy allows exactly its origin. Asked through the trusted host
 * runner with only PATH and HOME: nothing of the caller's environment can
 * redirect it.
 */
import { runTrustedHostCommand } from '@crustcore/sandbox';

export const DEFAULT_NPM_REGISTRY = 'https://registry.npmjs.org/';

export async function userNpmRegistry(userRoot: string, env: NodeJS.ProcessEnv): Promise<string> {
  const result = await runTrustedHostCommand({
    argv: ['npm', 'config', 'get', 'registry'],
    cwd: userRoot,
    env: {
      PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      ...(env.HOME === undefined ? {} : { HOME: env.HOME }),
      ...(env.npm_config_userconfig === undefined ? {} : { npm_config_userconfig: env.npm_config_userconfig }),
    },
    timeoutMs: 30_000,
    maxOutputBytes: 64 * 1024,
  });
  const value = result.exitCode === 0 ? result.stdout.text.trim() : '';
  return /^https?:\/\//.test(value) ? value : DEFAULT_NPM_REGISTRY;
}
