// A Corefile node-cache cannot serve. The message starts with the line, because it is what an
// operator reads after `kubectl edit configmap node-local-dns`: a line we do not serve is an error at
// start, never ignored.

export type CorefileErrorCode =
  /** Braces, keys: the text is not a Corefile. */
  | 'COREFILE_SYNTAX'
  /** A plugin or option node-cache does not serve. */
  | 'COREFILE_UNSUPPORTED'
  /** A served plugin with arguments it cannot take. */
  | 'COREFILE_INVALID';

export class CorefileError extends Error {
  readonly code: CorefileErrorCode;
  readonly line: number;

  constructor(code: CorefileErrorCode, line: number, message: string) {
    super(`Corefile line ${line}: ${message}`);
    this.name = 'CorefileError';
    this.code = code;
    this.line = line;
  }
}
