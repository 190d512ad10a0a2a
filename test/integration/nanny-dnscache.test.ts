// dnsmasq-nanny driving our dnscache (the default -dnsmasqExec), with real dnsmasq upstreams.

import t from 'tap';
import { nannyScenarios } from '../helpers/nanny-scenarios.ts';

nannyScenarios(t, 'dnscache');
