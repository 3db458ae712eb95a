/**
 * The pure-JS search engine: a bounded, sorted, no-follow walk through
 * verified descriptors, reading each file through `readFileAt`.
 */
import { err, ok, type Result } from '@crustcore/kernel';
import { closeQuietly, openDirectoryForRead } from './descriptor-walk.js';
import { DEFAULT_MAX_VISITED_ENTRIES, walkTree } from './list-files.js';
import { readFileAt } from './read-file.js';
import type { SearchError, SearchMatch, SearchPlan, SearchResult } from './search-types.js';

function clipLine(line: string, maxChars: number): string {
  return line.length > maxChars ? line.slice(0, maxChars) : line;
}

/**
 * Searches one file; pushes at most `room + 1` matches (one past the bound
 * tells the caller the result is truncated).
 */
function searchFile(plan: SearchPlan, relative: string, matches: SearchMatch[], room: number): void {
  const read = readFileAt(plan.root, relative, plan.maxFileBytes);
  if (read._tag === 'Left') return; // Too large, vanished, or swapped: skipped, like ripgrep does.
  const bytes = read.right.bytes;
  if (bytes.includes(0)) return; // Binary.
  const text = bytes.toString('utf8');
  let lineNumber = 0;
  let found = 0;
  for (let start = 0; start < text.length; ) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    lineNumber += 1;
    let line = text.slice(start, end);
    if (line.endsWith('\r')) line = line.slice(0, -1);
    const match = plan.regex.exec(line);
    if (match !== null) {
      matches.push({
        path: relative,
        lineNumber,
        column: Buffer.byteLength(line.slice(0, match.index)) + 1,
        text: clipLine(line, plan.maxLineChars),
      });
      found += 1;
      if (found > room) return;
    }
    start = end + 1;
  }
}

export async function searchWithJavaScript(plan: SearchPlan): Promise<Result<SearchError, SearchResult>> {
  const matches: SearchMatch[] = [];
  let walkComplete = true;
  const opened = openDirectoryForRead(plan.root, plan.start, plan.start);
  if (opened._tag === 'Left') {
    if (opened.left._tag !== 'NotADirectory') return err(opened.left);
    // The start is a file: search just it (the glob still applies).
    if (plan.glob === null || plan.glob.test(plan.start)) searchFile(plan, plan.start, matches, plan.maxMatches);
  } else {
    try {
      const outcome = walkTree(
        opened.right,
        plan.start,
        { maxVisitedEntries: DEFAULT_MAX_VISITED_ENTRIES, skipNames: new Set(plan.skipNames) },
        {
          visit: (relative, kind) => {
            if (kind !== 'file') return true;
            if (plan.glob !== null && !plan.glob.test(relative)) return true;
            searchFile(plan, relative, matches, plan.maxMatches - matches.length);
            return matches.length <= plan.maxMatches;
          },
        },
      );
      // Stopping because the match bound was hit is reported below; the visit bound is reported here.
      walkComplete = outcome.complete || matches.length > plan.maxMatches;
    } finally {
      closeQuietly(opened.right);
    }
  }
  const truncated = matches.length > plan.maxMatches || !walkComplete;
  return ok({ engine: 'javascript', matches: matches.slice(0, plan.maxMatches), truncated });
}
