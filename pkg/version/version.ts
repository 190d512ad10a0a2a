// The release version, reported by --version and CHAOS version.bind.
export const VERSION = '0.1.0';
