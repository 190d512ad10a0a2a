// A Corefile a program cannot serve. The message starts with where (`Corefile line N:`, or the imported
// file's path and line), because it is what an operator reads after `kubectl edit configmap`: a line
// that is not served is an error at start (and at reload), never ignored.

export type CorefileErrorCode =
  /** Braces, keys, quotes, imports: the text is not a Corefile. */
  | 'COREFILE_SYNTAX'
  /** A plugin or option this program does not serve. */
  | 'COREFILE_UNSUPPORTED'
  /** A served plugin with arguments it cannot take. */
  | 'COREFILE_INVALID';

/** Where a token came from: the file (null: the Corefile itself) and its line. */
export interface Place {
  file: string | null;
  line: number;
}

export class CorefileError extends Error {
  readonly code: CorefileErrorCode;
  readonly line: number;
  /** The imported file the line is in; null for the Corefile itself. */
  readonly file: string | null;

  constructor(code: CorefileErrorCode, at: number | Place, message: string) {
    const place: Place = typeof at === 'number' ? { file: null, line: at } : at;
    super(`${place.file ?? 'Corefile'} line ${place.line}: ${message}`);
    this.name = 'CorefileError';
    this.code = code;
    this.line = place.line;
    this.file = place.file;
  }
}
