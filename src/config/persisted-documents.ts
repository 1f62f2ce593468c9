import { z } from 'zod';
import { env, flag } from './variable.js';

export const PersistedDocuments = z
  .object({
    file: env('PERSISTED_DOCUMENTS_FILE', z.string(), {
      unset: "`persisted-documents.json` beside the gateway's package.json",
      description:
        'The persisted documents manifest: a JSON object from id (`sha256:<hex of the text>`) to document, which clients name by `documentId` (examples/typed-client generates it). Read once at start-up.',
    }),
    only: env('PERSISTED_DOCUMENTS_ONLY', flag, {
      default: 'false',
      description:
        "Run only the manifest's documents; any other operation gets `PERSISTED_DOCUMENT_REQUIRED`. Off by default, in production too: a federation router sends the operations it plans (`_entities`, `_service`), and GraphiQL and third-party clients send text. Turn it on for a gateway only your own clients call.",
    }),
  })
  .meta({ title: 'Persisted documents' });
