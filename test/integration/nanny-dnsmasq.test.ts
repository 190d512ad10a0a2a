// dnsmasq-nanny driving the real dnsmasq (/usr/sbin/dnsmasq), with real dnsmasq upstreams: its
// --servers-file is re-read on SIGHUP, and a restart binds the port the old one just left.

import t from 'tap';
import { nannyScenarios } from '../helpers/nanny-scenarios.ts';

nannyScenarios(t, 'dnsmasq');
