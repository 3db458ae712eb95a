import { describe, expect, it } from 'vitest';
import { linuxTerminalKind } from '../src/cli/sync-answer.js';

/** A Linux device number from its major and minor (the small encoding glibc's makedev uses below 4096). */
const device = (major: number, minor: number): number => major * 256 + minor;

describe('linuxTerminalKind: a character device by its number', () => {
  it.each([
    ['a pseudo-terminal (/dev/pts/3)', device(136, 3)],
    ['a high pseudo-terminal (/dev/pts/1100)', device(140, 76)],
    ['/dev/tty', device(5, 0)],
    ['/dev/console', device(5, 1)],
    ['a virtual console (/dev/tty1)', device(4, 1)],
  ])('%s is a terminal', (_name, rdev) => expect(linuxTerminalKind(rdev)).toBe('terminal'));

  it.each([
    ['/dev/null', device(1, 3)],
    ['/dev/zero', device(1, 5)],
    ['/dev/urandom', device(1, 9)],
  ])('%s is not', (_name, rdev) => expect(linuxTerminalKind(rdev)).toBe('not-terminal'));

  it('a device it does not know (a USB serial port, a sound card) is left to isatty', () => {
    expect(linuxTerminalKind(device(188, 0))).toBe('unknown');
    expect(linuxTerminalKind(device(116, 7))).toBe('unknown');
  });
});
