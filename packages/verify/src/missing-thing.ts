/**
 * Names what was missing in a failed run's output: the command a shell or
 * runner could not find, or the module an import could not resolve. A
 * diagnosis that says "command not found" without saying which command
 * leaves the user guessing. Pure text functions.
 */

const COMMAND_PATTERNS: readonly RegExp[] = [
  /^(?:\/\S+\/)?(?:sh|bash|dash|zsh): (?:line )?\d*:? ?([^\s:]+): (?:command )?not found$/m, // sh: 1: jest: not found
  /^(?:\/\S+\/)?(?:sh|bash|zsh): ([^\s:]+): command not found$/m, // bash: jest: command not found
  /^zsh: command not found: (\S+)$/m,
  /^bwrap: execvp ([^\s:]+): No such file or directory$/m,
  /^prlimit: failed to execute ([^\s:]+): No such file or directory$/m,
  /^(?:\/usr\/bin\/)?env: [‘'"]?([^’'"\s:]+)[’'"]?: No such file or directory$/m, // #!/usr/bin/env python
  /spawn (\S+) ENOENT/,
  /exec: "([^"]+)": executable file not found/,
  /npm (?:ERR!|error) could not determine executable to run/m,
];

/** The command that was not found, or null when the output does not name one. */
export function missingCommand(text: string): string | null {
  for (const pattern of COMMAND_PATTERNS) {
    const match = pattern.exec(text);
    if (match === null) continue;
    const name = match[1];
    if (name === undefined) return 'the program npx was asked to run (not installed)';
    return name.slice(0, 200);
  }
  return null;
}

const MODULE_PATTERNS: readonly RegExp[] = [
  /Cannot find (?:module|package) '([^']+)'/,
  /Cannot find (?:module|package) "([^"]+)"/,
  /No module named '([^']+)'/,
  /No module named ([\w.]+)/,
  /Failed to resolve import "([^"]+)"/,
  /no required module provides package (\S+?);?$/m,
  /cannot find package "([^"]+)"/,
  /unresolved import `([^`]+)`/,
];

/** The module an import could not resolve, or null. Host paths stay as the output printed them. */
export function missingModule(text: string): string | null {
  for (const pattern of MODULE_PATTERNS) {
    const match = pattern.exec(text);
    if (match?.[1] !== undefined) return match[1].slice(0, 200);
  }
  return null;
}

/** True for a package name (`lodash`, `@scope/x`, `pytest`), false for a path (`./x.js`, `/abs`, `file:`). */
export function isPackageSpecifier(name: string): boolean {
  return !/^(?:\.{1,2}\/|\/|file:|node:|[A-Za-z]:\\)/.test(name) && !name.includes('\\');
}
