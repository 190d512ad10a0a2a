// The klog/glog flags the original manifests pass (`--v=2`, `--logtostderr`, ...) and component-base's
// `--logging-format`. Programs spread this fragment into their own spec; parseOrExit applies `--v` and
// `--logging-format` to pkg/log. The rest are accepted so that existing manifests keep starting, and
// reported once as ignored.

import { LOG_FORMATS } from '../log/log.ts';
import type { FlagSpec } from './spec.ts';

const ignoredString = (help: string, def = '') => ({ type: 'string', default: def, help, ignored: true }) as const;
const ignoredBool = (help: string, def = false) => ({ type: 'bool', default: def, help, ignored: true }) as const;

export const klogFlags = {
  v: {
    type: 'int',
    default: 0,
    help: 'log verbosity, as klog: V(n) lines are written for n up to this level',
    validate: (v: number) => (v < 0 ? 'must not be negative' : undefined),
  },
  'logging-format': {
    type: 'string',
    default: 'text',
    help: 'log format: text (klog) or json (Kubernetes JSON: ts, caller, msg, v, err)',
    validate: (v: string) => ((LOG_FORMATS as readonly string[]).includes(v) ? undefined : `must be one of ${LOG_FORMATS.join(', ')}`),
  },
  vmodule: ignoredString('klog: per-file verbosity (pattern=N,...)'),
  logtostderr: ignoredBool('klog: log to stderr instead of files (we always do)', true),
  alsologtostderr: ignoredBool('klog: log to stderr as well as files'),
  'log-dir': ignoredString('klog: directory for log files'),
  'log-file': ignoredString('klog: log file'),
  stderrthreshold: ignoredString('klog: severity at or above which logs go to stderr', '2'),
  'log-flush-frequency': { type: 'duration', default: 5000, help: 'klog: flush interval', ignored: true },
  'skip-headers': ignoredBool('klog: omit header prefixes'),
  'one-output': ignoredBool('klog: write each entry only to its own severity file'),
  'add-dir-header': ignoredBool('klog: add the file directory to the header'),
  'skip-log-headers': ignoredBool('klog: omit headers when opening log files'),
  'log-file-max-size': { type: 'int', default: 1800, help: 'klog: maximum log file size in MB', ignored: true },
  'log-backtrace-at': ignoredString('klog: file:line that emits a stack trace'),
} as const satisfies FlagSpec;
