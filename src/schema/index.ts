import { builder } from './builder.js';
import './component.js';
import './incident.js';
import './maintenance.js';
import './page.js';
import './status-event.js';

export const schema = builder.toSchema({ sortSchema: false });
