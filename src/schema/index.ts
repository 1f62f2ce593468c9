import { builder } from './builder.js';
import './chain.js';
import './component.js';
import './errors.js';
import './incident.js';
import './maintenance.js';
import './page.js';
import './status-event.js';
import './verification.js';

export const schema = builder.toSchema({ sortSchema: false });
