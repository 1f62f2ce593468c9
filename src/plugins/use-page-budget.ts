import type { Plugin } from 'graphql-yoga';
import {
  type PageDirectory,
  pageBudgetExceeded,
  pagesReadBy,
} from '../schema/plugins/page-budget.js';
import { refusingBeforeRun } from './refusing-before-run.js';

export interface PageBudgetOptions {
  /** The configured status pages. */
  readonly pages: PageDirectory;
  /** Pages one operation may read (`MAX_PAGES_PER_OPERATION`). */
  readonly maxPages: number;
}

/**
 * Refuses, before it runs, an operation that would read more status pages than one operation may:
 * each page read may cost an upstream request per document, and aliases, fields and fragments
 * multiply what one field names. The pages are those its fields declare (`readsPages`), counted
 * once however many fields read them. A subscription is counted when it starts; each of its events
 * reads the same pages.
 */
export function usePageBudget({ pages, maxPages }: PageBudgetOptions): Plugin {
  return refusingBeforeRun((args) => {
    const read = pagesReadBy(
      args.schema,
      args.document,
      args.operationName,
      args.variableValues,
      pages,
    );
    return read && read.size > maxPages
      ? { errors: [pageBudgetExceeded(read.size, maxPages)] }
      : undefined;
  });
}
