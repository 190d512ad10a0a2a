// Errors from command-line parsing. The message always names the flag (and the bad value when there
// is one), so that `parseOrExit` can print it as is.

export type FlagErrorCode = 'FLAG_UNKNOWN' | 'FLAG_VALUE' | 'FLAG_MISSING';

export class FlagError extends Error {
  readonly code: FlagErrorCode;
  /** The flag as the user wrote it, without dashes (or the stray argument for an unexpected one). */
  readonly flag: string;

  constructor(code: FlagErrorCode, flag: string, message: string) {
    super(message);
    this.name = 'FlagError';
    this.code = code;
    this.flag = flag;
  }
}
