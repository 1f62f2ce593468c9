// The live status board: every configured page, grouped by tag and shown a screen at a time, the
// pages on screen followed by one GraphQL subscription over server-sent events. Rendered with DOM
// calls only: feed text is third-party input, only ever set as text (update bodies through
// update-body.js), never parsed as HTML.
//
// What the board asks the gateway is public/status-board/board.graphql, one persisted document:
// the gateway writes its id into the page, and knows it even when it accepts persisted documents
// only. The list of pages comes from the gateway's `pages` (what their configuration says, which
// costs no request to any feed), read on each load, so that pages added to or removed from
// STATUS_PAGES_FILE show on the next.

import { readSubscription } from './event-stream.js';
import { updateBody } from './update-body.js';

const meta = (name) => document.querySelector(`meta[name="${name}"]`).content;
const ENDPOINT = new URL(meta('graphql-endpoint'), location.href);
const DOCUMENT_ID = meta('board-document');
/** Pages on a screen: the gateway writes it, within what one subscription may follow. */
const SCREEN_SIZE = Number.parseInt(meta('board-page-size'), 10) || 24;

/** Waits before subscribing again: the first, doubled after each stream that brought no page. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 60_000;
/** How often the screen's pages are asked whether they answer (the subscription is silent then). */
const REACHABILITY_EVERY_MS = 30_000;
/** Events of each kind a card shows on a screen of several pages; the page's own view shows all. */
const EVENTS_ON_CARD = 3;
/** Refusals that are the request's fault: their message is shown, as it says what to change. */
const CLIENT_ERRORS = new Set([
  'BAD_REQUEST',
  'BAD_USER_INPUT',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_DOCUMENT_REQUIRED',
  'JSON_TOO_COMPLEX',
  'PAYLOAD_TOO_LARGE',
  'TOO_MANY_SUBSCRIPTIONS',
  'GRAPHQL_VALIDATION_FAILED',
  'GRAPHQL_PARSE_FAILED',
]);
/** The key of the group of pages without a tag (a tag is never empty). */
const NO_TAG = '';

const STATUS_TEXT = {
  OPERATIONAL: 'Operational',
  DEGRADED_PERFORMANCE: 'Degraded performance',
  PARTIAL_OUTAGE: 'Partial outage',
  MAJOR_OUTAGE: 'Major outage',
  UNDER_MAINTENANCE: 'Under maintenance',
  UNKNOWN: 'Unknown',
};

const $ = (selector, root = document) => root.querySelector(selector);
const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const formatTime = (iso) => (iso ? timeFormat.format(new Date(iso)) : '');
const sentenceCase = (value) => value.charAt(0) + value.slice(1).toLowerCase().replaceAll('_', ' ');
const plural = (count, one, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function anchor(className, text, href) {
  const node = element('a', className, text);
  node.href = href;
  return node;
}

function fromTemplate(id) {
  return $(id).content.firstElementChild.cloneNode(true);
}

// ---------------------------------------------------------------------------------------------
// Talking to the gateway

class Refused extends Error {
  constructor(errors) {
    super(errors.map((error) => error.message).join(' '));
    this.errors = errors;
  }
}

function operationUrl(operationName, variables) {
  const url = new URL(ENDPOINT);
  url.searchParams.set('documentId', DOCUMENT_ID);
  url.searchParams.set('operationName', operationName);
  url.searchParams.set('variables', JSON.stringify(variables));
  return url;
}

/** Runs a query of board.graphql; its data, or a `Refused` error when it has none. */
async function query(operationName, variables, signal) {
  const response = await fetch(operationUrl(operationName, variables), {
    headers: { accept: 'application/graphql-response+json, application/json' },
    // Live: never the browser's stale copy (the gateway lets caches serve one while revalidating),
    // always asked again, a 304 when nothing changed.
    cache: 'no-cache',
    signal,
  });
  const result = await response.json();
  if (!result.data) throw new Refused(result.errors ?? [{ message: `HTTP ${response.status}` }]);
  return result.data;
}

/**
 * The configured pages (slug and tags, in configuration order), 100 a request; `search` keeps
 * those whose slug or configured name holds it.
 */
async function readDirectory(signal, search) {
  const pages = [];
  let after = null;
  for (;;) {
    const { pages: slice } = await query('BoardDirectory', { after, search }, signal);
    pages.push(...slice.nodes.filter(Boolean));
    if (!slice.pageInfo.hasNextPage || !slice.pageInfo.endCursor) {
      return { pages, total: slice.totalCount, complete: search === undefined };
    }
    after = slice.pageInfo.endCursor;
    if (search === undefined)
      showNotice(`Reading the list of pages… ${pages.length} of ${slice.totalCount}`);
  }
}

// ---------------------------------------------------------------------------------------------
// What is on screen: the view the URL names, cut into screens

/** The view `search` (a URL's query) names: `?slug=`, `?tag=`, `?untagged`, and `?page=`. */
function viewOf(search) {
  const params = new URLSearchParams(search);
  const page = Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1);
  if (params.has('slug')) return { kind: 'slug', slug: params.get('slug') ?? '', page: 1 };
  if (params.has('untagged')) return { kind: 'untagged', page };
  if (params.get('tag')) return { kind: 'tag', tag: params.get('tag'), page };
  return { kind: 'all', page };
}

function hrefOf(view) {
  const params = new URLSearchParams();
  if (view.kind === 'slug') params.set('slug', view.slug);
  if (view.kind === 'tag') params.set('tag', view.tag);
  if (view.kind === 'untagged') params.set('untagged', '');
  if (view.page > 1) params.set('page', String(view.page));
  const query = params.toString().replace(/=(&|$)/, '$1');
  return `${location.pathname}${query ? `?${query}` : ''}`;
}

const tagLabel = (tag) => (tag === NO_TAG ? 'No tag' : tag);
const tagHref = (tag) => hrefOf(tag === NO_TAG ? { kind: 'untagged' } : { kind: 'tag', tag });

/**
 * The pages of a view, each with the group it shows in. Every page: grouped under its first tag,
 * groups in the order their tags first come in the configuration, pages without a tag last; a
 * page with several tags shows once, under its first, and `?tag=` lists it under each.
 */
function listOf(view, directory) {
  if (view.kind === 'tag') {
    return directory.pages
      .filter((page) => page.tags.includes(view.tag))
      .map((page) => ({ page, tag: view.tag }));
  }
  if (view.kind === 'untagged') {
    return directory.pages
      .filter((page) => page.tags.length === 0)
      .map((page) => ({ page, tag: NO_TAG }));
  }
  const groups = new Map();
  for (const page of directory.pages) {
    const tag = page.tags[0] ?? NO_TAG;
    if (!groups.has(tag)) groups.set(tag, []);
    groups.get(tag).push(page);
  }
  const untagged = groups.get(NO_TAG);
  groups.delete(NO_TAG);
  if (untagged) groups.set(NO_TAG, untagged);
  return [...groups].flatMap(([tag, pages]) => pages.map((page) => ({ page, tag })));
}

/** Screen `view.page` of `list`: its pages in runs of one group, and where it is in the list. */
function screenOf(view, list) {
  const count = Math.max(1, Math.ceil(list.length / SCREEN_SIZE));
  const number = Math.min(view.page, count);
  const start = (number - 1) * SCREEN_SIZE;
  const shown = list.slice(start, start + SCREEN_SIZE);
  const groupSizes = new Map();
  for (const { tag } of list) groupSizes.set(tag, (groupSizes.get(tag) ?? 0) + 1);
  const groups = [];
  for (const [index, { page, tag }] of shown.entries()) {
    const last = groups.at(-1);
    if (last?.tag === tag) last.pages.push(page);
    else {
      const continued = index === 0 && start > 0 && list[start - 1].tag === tag;
      groups.push({ tag, continued, size: groupSizes.get(tag), pages: [page] });
    }
  }
  return { groups, number, count, start, total: list.length };
}

// ---------------------------------------------------------------------------------------------
// Rendering

function setConnection(state, text = state) {
  const connection = $('.connection');
  connection.dataset.state = state;
  connection.textContent = text;
}

function showNotice(text, link) {
  const notice = $('.notice');
  notice.hidden = !text;
  notice.replaceChildren(...(text ? [text] : []), ...(link ? [' ', link] : []));
}

function showProblem(text) {
  const problems = $('.problems');
  problems.hidden = !text;
  problems.textContent = text ?? '';
}

/** Statuspage hides a component marked "only show if degraded" while it is operational. */
const isShown = (component) => !component.onlyShowIfDegraded || component.status !== 'OPERATIONAL';

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

/** What the closed component list says: what is not operational, or that nothing is. */
function componentsSummary(components) {
  // A child is named with its group: pages repeat names across groups (each network's "API").
  const leaves = components.flatMap((component) =>
    component.children?.length
      ? component.children
          .filter(isShown)
          .map((child) => ({ ...child, name: `${component.name} › ${child.name}` }))
      : [component],
  );
  const down = leaves.filter((component) => component.status !== 'OPERATIONAL');
  if (leaves.length === 0) return '';
  if (down.length === 0) return `· all ${leaves.length} operational`;
  const names = down.slice(0, 3).map((component) => component.name);
  const more = down.length > names.length ? ` and ${down.length - names.length} more` : '';
  return `· ${down.length} of ${leaves.length} not operational: ${names.join(', ')}${more}`;
}

/** "Minor impact"; nothing for an impact of none, or one the gateway does not know. */
const impactText = (impact) =>
  impact && impact !== 'NONE' && impact !== 'UNKNOWN' ? `${sentenceCase(impact)} impact` : '';

const httpHref = (url) => (url && /^https?:\/\//i.test(url) ? url : undefined);

function eventItem(event, when) {
  const item = element('li');
  item.dataset.eventId = event.id;
  const href = httpHref(event.shortlink);
  const title = href
    ? anchor('event-title', event.name, href)
    : element('span', 'event-title', event.name);
  item.append(title);
  item.append(
    element('div', 'event-meta', [sentenceCase(event.status), when].filter(Boolean).join(' · ')),
  );
  const [latest] = event.updates;
  if (latest?.body) {
    const body = element('p', 'event-update');
    body.append(updateBody(latest.body));
    item.append(body);
  }
  return item;
}

function renderList(card, kind, items, single) {
  const shown = single ? items : items.slice(0, EVENTS_ON_CARD);
  const list = $(`.${kind}`, card);
  list.replaceChildren(...shown);
  if (shown.length < items.length) {
    const more = element('li', 'more');
    more.append(
      anchor(
        '',
        `${items.length - shown.length} more…`,
        hrefOf({ kind: 'slug', slug: card.dataset.slug }),
      ),
    );
    list.append(more);
  }
  $(`.${kind}-empty`, card).hidden = items.length > 0;
  $(`.${kind}-section`, card).dataset.empty = String(items.length === 0);
}

function setTime(node, iso) {
  node.dateTime = iso ?? '';
  node.textContent = formatTime(iso);
}

function cardOf(entry, single) {
  const card = fromTemplate('#status-page');
  card.dataset.slug = entry.slug;
  const link = $('.page-link', card);
  link.textContent = entry.slug;
  link.href = hrefOf({ kind: 'slug', slug: entry.slug });
  $('.as-of', card).hidden = true;
  $('.page-tags', card).replaceChildren(
    ...entry.tags.map((tag) => {
      const item = element('li');
      item.append(anchor('tag', tag, tagHref(tag)));
      return item;
    }),
  );
  $('.components-section', card).open = single;
  return card;
}

/** Whether the page answers, and since when it does not. */
function showReachability(card, reachable, lastSeenAt) {
  card.dataset.reachable = String(reachable);
  card.dataset.lastSeenAt = reachable ? '' : (lastSeenAt ?? '');
  const line = $('.reachability', card);
  line.hidden = reachable;
  if (reachable) return;
  if (card.dataset.shown !== 'true') $('.banner-text', card).textContent = 'Not answering';
  line.textContent = lastSeenAt
    ? `Not answering: last reached ${formatTime(lastSeenAt)}; this is its last known state.`
    : 'Not answering: the gateway has not reached this page yet.';
}

/** The cards of the screen, by slug, and whether it shows one page alone. */
const screen = { cards: new Map(), single: false };

function render(page) {
  const card = screen.cards.get(page.slug);
  if (!card) return;
  if (screen.single) document.title = `${page.status.description} · ${page.name}`;
  card.dataset.shown = 'true';
  $('.banner', card).dataset.indicator = page.status.indicator;
  $('.page-link', card).textContent = page.name;
  $('.banner-text', card).textContent = page.status.description;
  $('.as-of', card).hidden = false;
  setTime($('.updated-at', card), page.updatedAt);
  setTime($('.fetched-at', card), page.fetchedAt);
  // A subscriber that joins late first gets the last page sent, perhaps from before the page
  // stopped answering: it says the page answers only if it was fetched after the check that said
  // it does not.
  const older = page.fetchedAt <= (card.dataset.lastSeenAt ?? '');
  if (!(page.reachable && card.dataset.reachable === 'false' && older)) {
    showReachability(card, page.reachable, page.lastSeenAt);
  }
  const components = page.components.filter(isShown);
  $('.components', card).replaceChildren(...components.map(componentItem));
  $('.components-summary', card).textContent = componentsSummary(components);
  renderList(
    card,
    'incidents',
    page.incidents.map((incident) => eventItem(incident, impactText(incident.impact))),
    screen.single,
  );
  renderList(
    card,
    'maintenances',
    page.scheduledMaintenances.map((maintenance) =>
      eventItem(
        maintenance,
        `${formatTime(maintenance.scheduledFor)} – ${formatTime(maintenance.scheduledUntil)}`,
      ),
    ),
    screen.single,
  );
}

function renderTags(view, directory) {
  const nav = $('.tags');
  const counts = new Map();
  let untagged = 0;
  for (const page of directory.pages) {
    for (const tag of page.tags) counts.set(tag, (counts.get(tag) ?? 0) + 1);
    if (page.tags.length === 0) untagged += 1;
  }
  nav.hidden = counts.size === 0 || !directory.complete;
  if (nav.hidden) return;
  const link = (text, size, href, current) => {
    const node = anchor('tag-link', text, href);
    node.append(' ', element('span', 'count', String(size)));
    if (current) node.setAttribute('aria-current', 'page');
    return node;
  };
  nav.replaceChildren(
    link('All', directory.pages.length, hrefOf({ kind: 'all' }), view.kind === 'all'),
    ...[...counts].map(([tag, size]) =>
      link(tag, size, tagHref(tag), view.kind === 'tag' && view.tag === tag),
    ),
    ...(untagged > 0
      ? [link(tagLabel(NO_TAG), untagged, tagHref(NO_TAG), view.kind === 'untagged')]
      : []),
  );
}

function renderPager(view, { number, count, start, total }, shown) {
  const pager = $('.pager');
  pager.hidden = count <= 1;
  const previous = $('.previous', pager);
  const next = $('.next', pager);
  previous.hidden = number <= 1;
  next.hidden = number >= count;
  previous.href = hrefOf({ ...view, page: number - 1 });
  next.href = hrefOf({ ...view, page: number + 1 });
  $('.range', pager).textContent =
    `${start + 1}–${start + shown} of ${plural(total, 'page')} · screen ${number} of ${count}`;
}

/** Puts the screen's groups and cards in place, as placeholders until their pages arrive. */
function renderScreen(view, directory, { groups, ...position }, single) {
  document.body.dataset.layout = single ? 'single' : 'grid';
  document.title = 'Network status';
  screen.cards = new Map();
  screen.single = single;
  const tagged = directory.pages.some((page) => page.tags.length > 0);
  const sections = groups.map((group) => {
    const section = fromTemplate('#group');
    section.dataset.tag = group.tag;
    const heading = $('.group-name', section);
    heading.hidden = single || !tagged;
    heading.replaceChildren(
      anchor('', tagLabel(group.tag), tagHref(group.tag)),
      ' ',
      element('span', 'count', plural(group.size, 'page')),
    );
    if (group.continued) heading.append(' ', element('span', 'continued', '(continued)'));
    $('.cards', section).append(
      ...group.pages.map((entry) => {
        const card = cardOf(entry, single);
        screen.cards.set(entry.slug, card);
        return card;
      }),
    );
    return section;
  });
  $('.pages').replaceChildren(...sections);
  $('.total').textContent = directory.complete ? plural(directory.total, 'page') : '';
  $('.back').hidden = view.kind === 'all';
  renderTags(view, directory);
  renderPager(view, position, screen.cards.size);
}

// ---------------------------------------------------------------------------------------------
// Following the pages on screen

/** The screen being followed: its slugs, and what stops its requests when the screen changes. */
let following;

function follow(slugs) {
  following?.controller.abort();
  const controller = new AbortController();
  following = { slugs, controller, signal: controller.signal, retryMs: FIRST_RETRY_MS };
  if (slugs.length === 0) {
    setConnection('idle', 'nothing to follow');
    return;
  }
  subscribe(following);
  checkReachability(following);
}

/** Opens the screen's subscription, and opens it again when it ends, waiting longer each time. */
async function subscribe(current) {
  const stream = new AbortController();
  current.stream = stream;
  const signal = AbortSignal.any([current.signal, stream.signal]);
  let delivered = false;
  let last;
  const started = performance.now();
  setConnection('connecting');
  try {
    await readSubscription(operationUrl('StatusBoard', { slugs: current.slugs }), {
      signal,
      onOpen: () => setConnection('live'),
      onResult: (result) => {
        if (signal.aborted) return;
        last = result;
        if (result.data?.statusPageChanged) {
          delivered = true;
          render(result.data.statusPageChanged);
          showProblem(null);
        }
        document.body.dataset.updates = String(Number(document.body.dataset.updates ?? 0) + 1);
      },
    });
  } catch {
    // The connection failed or was cut: tried again below, like a stream the server ended.
  }
  if (current.signal.aborted) return;
  if (stream.signal.aborted) {
    subscribe(current);
    return;
  }
  // A stream that brought pages, or lasted, was no refusal: the next wait starts again at 1 s.
  if (delivered || performance.now() - started > MAX_RETRY_MS) current.retryMs = FIRST_RETRY_MS;
  const waitMs = current.retryMs;
  current.retryMs = Math.min(waitMs * 2, MAX_RETRY_MS);
  const errors = last && !last.data?.statusPageChanged ? (last.errors ?? []) : [];
  const seconds = Math.round(waitMs / 1000);
  if (errors.some((error) => error.extensions?.code === 'STATUS_PAGES_CHANGED')) {
    // Pages of the screen were removed or changed: read the list again, then follow what is there.
    setConnection('reconnecting', 'the list of pages changed');
    setTimeout(() => current.signal.aborted || route({ reread: true }), waitMs);
    return;
  }
  const refusal = errors.find((error) => CLIENT_ERRORS.has(error.extensions?.code));
  if (refusal) {
    setConnection('refused', `refused, trying again in ${seconds} s`);
    showProblem(`The gateway refused to follow these pages: ${refusal.message}`);
  } else {
    setConnection('reconnecting', `reconnecting in ${seconds} s`);
  }
  setTimeout(() => current.signal.aborted || subscribe(current), waitMs);
}

/**
 * Marks the screen's pages that do not answer (the subscription says nothing while a page is
 * down), and again every `REACHABILITY_EVERY_MS`. A page seen answering again whose card has no
 * state yet is subscribed to again, which starts with the whole page.
 */
async function checkReachability(current) {
  try {
    const { statusOverview } = await query(
      'BoardReachability',
      { slugs: current.slugs },
      current.signal,
    );
    if (current.signal.aborted) return;
    const unreachable = new Map(statusOverview.unreachablePages.map((page) => [page.slug, page]));
    let missing = false;
    for (const [slug, card] of screen.cards) {
      const page = unreachable.get(slug);
      if (page) {
        if (card.dataset.shown !== 'true') $('.page-link', card).textContent = page.name;
        showReachability(card, false, page.lastSeenAt);
      } else if (card.dataset.reachable === 'false') {
        if (card.dataset.shown === 'true') showReachability(card, true);
        else missing = true;
      }
    }
    if (missing) current.stream?.abort();
  } catch {
    // The next check, or the subscription, will say.
  }
  if (!current.signal.aborted) {
    setTimeout(() => current.signal.aborted || checkReachability(current), REACHABILITY_EVERY_MS);
  }
}

// ---------------------------------------------------------------------------------------------
// Routing: the URL names the view; links within the board change it without a reload

/** Every configured page, read once a load (and again when the list changes while followed). */
let directory;
/** Each route gets a number: one overtaken by a later one drops its results. */
let routes = 0;
/** The wait before reading the list again after it could not be read, doubled each time. */
let listRetryMs = FIRST_RETRY_MS;

async function route({ reread = false } = {}) {
  const number = ++routes;
  const view = viewOf(location.search);
  following?.controller.abort();
  showNotice(null);
  try {
    if (reread) directory = undefined;
    if (view.kind === 'slug') {
      const found =
        directory ?? (await readDirectory(undefined, view.slug.toLowerCase().slice(0, 200)));
      if (number !== routes) return;
      const entry = found.pages.find((page) => page.slug === view.slug);
      if (!entry) {
        renderScreen(view, found, { groups: [], number: 1, count: 1, start: 0, total: 0 }, true);
        showNotice(
          `No status page is configured with the slug “${view.slug}”.`,
          anchor('', 'See every page', hrefOf({ kind: 'all' })),
        );
        follow([]);
        return;
      }
      const screenOfOne = screenOf(view, [{ page: entry, tag: entry.tags[0] ?? NO_TAG }]);
      renderScreen(view, found, screenOfOne, true);
      follow([entry.slug]);
      return;
    }
    directory ??= await readDirectory();
    if (number !== routes) return;
    listRetryMs = FIRST_RETRY_MS;
    showNotice(null);
    const list = listOf(view, directory);
    if (view.kind === 'tag' && list.length === 0) {
      showNotice(
        `No status page has the tag “${view.tag}”.`,
        anchor('', 'See every page', hrefOf({ kind: 'all' })),
      );
    }
    const position = screenOf(view, list);
    renderScreen(view, directory, position, view.kind === 'all' && directory.pages.length === 1);
    showProblem(null);
    follow(position.groups.flatMap((group) => group.pages.map((page) => page.slug)));
  } catch (error) {
    if (number !== routes || error.name === 'AbortError') return;
    // The list could not be read: say why, and try again.
    const waitMs = listRetryMs;
    listRetryMs = Math.min(waitMs * 2, MAX_RETRY_MS);
    showNotice(null);
    showProblem(`The list of pages could not be read: ${error.message}`);
    setConnection('reconnecting', `trying again in ${Math.round(waitMs / 1000)} s`);
    setTimeout(() => number === routes && route({ reread }), waitMs);
  }
}

document.addEventListener('click', (event) => {
  const link = event.target.closest?.('a[href]');
  if (
    !link ||
    event.button !== 0 ||
    event.metaKey ||
    event.ctrlKey ||
    event.shiftKey ||
    event.altKey
  )
    return;
  const url = new URL(link.href);
  if (url.origin !== location.origin || url.pathname !== location.pathname || link.target) return;
  event.preventDefault();
  history.pushState(null, '', url);
  window.scrollTo(0, 0);
  route();
});
window.addEventListener('popstate', () => route());

route();
