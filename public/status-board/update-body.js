// An incident or maintenance update's body as Statuspage shows it: the operators' line breaks
// (newlines, and the `<br>` some pages write) kept, http(s) addresses made links, bare or written
// as Markdown links, and everything else shown as the text it is. The body is third-party input:
// it is cut into text nodes, <br> and <a> elements made here, never parsed as HTML, so `<script>`
// or `<img onerror>` in it is text, and a link goes nowhere but http(s).

/** A line break: `<br>` (with the newline written after it, if any: one break), or a newline. */
const LINE_BREAK = /<br\s*\/?>(?:\r\n|\r|\n)?|\r\n|\r|\n/gi;

/**
 * A Markdown link, `[label](target)` or `[label](target "title")`, or a bare http(s) address.
 * Bounded repetitions, so that a long hostile line costs little.
 */
const LINK =
  /\[([^\]\r\n]{0,500})\]\(\s*([^\s()]{1,2048})(?:\s+"[^"\r\n]{0,500}")?\s*\)|\bhttps?:\/\/[^\s<>"]{1,2048}/gi;

/** Punctuation that ends a sentence rather than the address it follows. */
const TRAILING = /[.,;:!?'"*_]$/;

const LINK_REL = 'noopener noreferrer nofollow';

/** `text` as an http(s) URL, or undefined. */
function httpUrl(text) {
  if (!URL.canParse(text)) return undefined;
  const url = new URL(text);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
}

/** A bare address without the punctuation after it: a closing bracket only when unmatched. */
function trimAddress(address) {
  let end = address.length;
  for (;;) {
    const head = address.slice(0, end);
    if (TRAILING.test(head)) end -= 1;
    else if (head.endsWith(')') && count(head, '(') < count(head, ')')) end -= 1;
    else if (head.endsWith(']') && count(head, '[') < count(head, ']')) end -= 1;
    else return head;
  }
}

const count = (text, character) => text.split(character).length - 1;

function link(url, label) {
  const anchor = document.createElement('a');
  anchor.href = url.href;
  anchor.textContent = label;
  anchor.rel = LINK_REL;
  anchor.target = '_blank';
  return anchor;
}

/** One line's text, links and plain text. */
function lineNodes(line) {
  const nodes = [];
  let at = 0;
  const text = (value) => {
    if (value) nodes.push(document.createTextNode(value));
  };
  for (const match of line.matchAll(LINK)) {
    text(line.slice(at, match.index));
    at = match.index + match[0].length;
    const [written, label, target] = match;
    if (target === undefined) {
      const address = trimAddress(written);
      const url = httpUrl(address);
      if (url) nodes.push(link(url, address));
      else text(address);
      text(written.slice(address.length));
      continue;
    }
    const url = httpUrl(target);
    if (url) nodes.push(link(url, label || target));
    else if (target.toLowerCase().startsWith('mailto:')) {
      // An address is shown, not linked: only http(s) becomes a link.
      const address = target.slice('mailto:'.length);
      text(label && label !== address ? `${label} (${address})` : address);
    } else text(written);
  }
  text(line.slice(at));
  return nodes;
}

/** `body` as nodes to append to an element. */
export function updateBody(body) {
  const fragment = document.createDocumentFragment();
  body.split(LINE_BREAK).forEach((line, index) => {
    if (index > 0) fragment.append(document.createElement('br'));
    fragment.append(...lineNodes(line));
  });
  return fragment;
}
