// The live status board: one GraphQL subscription over server-sent events (a plain EventSource on
// the gateway's /graphql), rendered with DOM calls only. Feed text is third-party input: it is only
// ever set as text, never parsed as HTML.

// The board's operation is public/status-board/board.graphql, persisted: the gateway knows it by
// this id (the SHA-256 of the file), even when it accepts persisted documents only.
const DOCUMENT_ID = 'sha256:aeb22cd7719c6b9418cb85ba3605fd6bf035db1c5b03021dfec7759db241efae';

const STATUS_TEXT = {
  OPERATIONAL: 'Operational',
  DEGRADED_PERFORMANCE: 'Degraded performance',
  PARTIAL_OUTAGE: 'Partial outage',
  MAJOR_OUTAGE: 'Major outage',
  UNDER_MAINTENANCE: 'Under maintenance',
  UNKNOWN: 'Unknown',
};

/** How long to wait before opening a new stream after the server completed one (a restart). */
const RECONNECT_MS = 1000;

const endpoint = document.querySelector('meta[name="graphql-endpoint"]').content;
/** The configured pages, in configuration order (the gateway writes them in); `?slug=` picks one. */
const configured = document
  .querySelector('meta[name="status-pages"]')
  .content.split(',')
  .filter(Boolean);
const asked = new URLSearchParams(location.search).get('slug');
const slugs = asked && configured.includes(asked) ? [asked] : configured;
const $ = (selector) => document.querySelector(selector);
const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const formatTime = (iso) => (iso ? timeFormat.format(new Date(iso)) : '');
const sentenceCase = (value) => value.charAt(0) + value.slice(1).toLowerCase().replaceAll('_', ' ');

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function setConnection(state) {
  const connection = $('.connection');
  connection.dataset.state = state;
  connection.textContent = state;
}

function componentItem(component) {
  const item = element('li', component.children?.length ? 'group' : '');
  item.dataset.componentId = component.id;
  const row = element('div', 'component');
  row.append(element('span', 'name', component.name));
  const status = element('span', 'status', STATUS_TEXT[component.status] ?? STATUS_TEXT.UNKNOWN);
  status.dataset.status = component.status;
  row.append(status);
  item.append(row);
  const children = (component.children ?? []).filter(isShown);
  if (children.length > 0) {
    const list = element('ul');
    list.append(...children.map(componentItem));
    item.append(list);
  }
  return item;
}

/** Statuspage hides a component marked "only show if degraded" while it is operational. */
const isShown = (component) => !component.onlyShowIfDegraded || component.status !== 'OPERATIONAL';

function eventItem(event, when) {
  const item = element('li');
  item.dataset.eventId = event.id;
  const title = event.shortlink
    ? element('a', 'event-title', event.name)
    : element('span', 'event-title', event.name);
  if (event.shortlink) title.href = event.shortlink;
  item.append(title);
  item.append(
    element('div', 'event-meta', [sentenceCase(event.status), when].filter(Boolean).join(' · ')),
  );
  const [latest] = event.updates;
  if (latest?.body) item.append(element('p', 'event-update', latest.body));
  return item;
}

function renderList(root, selector, emptySelector, items) {
  root.querySelector(selector).replaceChildren(...items);
  root.querySelector(emptySelector).hidden = items.length > 0;
}

/** The section of page `slug`, made from the template the first time, in configuration order. */
function sectionOf(slug) {
  const pages = $('.pages');
  const existing = [...pages.children].find((section) => section.dataset.slug === slug);
  if (existing) return existing;
  const section = $('#status-page').content.firstElementChild.cloneNode(true);
  section.dataset.slug = slug;
  const after = [...pages.children].find(
    (other) => slugs.indexOf(other.dataset.slug) > slugs.indexOf(slug),
  );
  pages.insertBefore(section, after ?? null);
  return section;
}

function render(page) {
  if (slugs.length === 1) document.title = `${page.status.description} · ${page.name}`;
  const root = sectionOf(page.slug);
  const banner = root.querySelector('.banner');
  banner.dataset.indicator = page.status.indicator;
  root.querySelector('.page-name').textContent = page.name;
  root.querySelector('.banner-text').textContent = page.status.description;
  root.querySelector('.fetched-at').textContent =
    `as of ${formatTime(page.fetchedAt)}${page.stale ? ' (the feed is not answering; last known state)' : ''}`;
  root
    .querySelector('.components')
    .replaceChildren(...page.components.filter(isShown).map(componentItem));
  renderList(
    root,
    '.incidents',
    '.incidents-empty',
    page.incidents.map((incident) =>
      eventItem(incident, `${sentenceCase(incident.impact)} impact`),
    ),
  );
  renderList(
    root,
    '.maintenances',
    '.maintenances-empty',
    page.scheduledMaintenances.map((maintenance) =>
      eventItem(
        maintenance,
        `${formatTime(maintenance.scheduledFor)} – ${formatTime(maintenance.scheduledUntil)}`,
      ),
    ),
  );
}

function showProblems(errors) {
  const problems = $('.problems');
  problems.hidden = !errors?.length;
  problems.textContent = errors?.length ? errors.map((error) => error.message).join(' ') : '';
}

function connect() {
  const url = new URL(endpoint, location.href);
  url.searchParams.set('documentId', DOCUMENT_ID);
  url.searchParams.set('variables', JSON.stringify({ slugs }));
  const source = new EventSource(url);
  source.addEventListener('open', () => setConnection('live'));
  source.addEventListener('next', (message) => {
    const { data, errors } = JSON.parse(message.data);
    if (data?.statusPageChanged) render(data.statusPageChanged);
    showProblems(errors);
    document.body.dataset.updates = String(Number(document.body.dataset.updates ?? 0) + 1);
  });
  // The server completes the stream when it shuts down: open a new one (to another replica).
  source.addEventListener('complete', () => {
    source.close();
    setConnection('reconnecting');
    setTimeout(connect, RECONNECT_MS);
  });
  // EventSource reconnects by itself after a network error.
  source.addEventListener('error', () => setConnection('reconnecting'));
}

connect();
