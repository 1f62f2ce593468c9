# The gateway's production image: the compiled gateway (src/ only) and its production
# dependencies. The upstream simulator has its own image (simulator/Dockerfile), for the compose
# stack only. No `# syntax=` line: BuildKit's built-in frontend and the legacy builder both read this
# file, so a build needs nothing from a registry but the base image and the npm packages.

# --- build: all dependencies, compile src/ to dist/ ---------------------------------------------
FROM node:24-slim AS build
WORKDIR /app

COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The build info (what makes a second `npm start` build nothing) is of no use to the image.
RUN npm run build && rm dist/.tsbuildinfo

# --- runtime: production dependencies and the compiled output only ------------------------------
FROM node:24-slim AS runtime
ENV NODE_ENV=production
# Fewer malloc arenas: under load, glibc's default (8 per core) holds on to memory V8 has freed.
ENV MALLOC_ARENA_MAX=2
WORKDIR /app

# --omit=optional as well: TypeScript is a devDependency and also an optional peer of `ox`, which
# npm marks devOptional and keeps unless both are omitted (31 MB with its native compiler). The only
# optional package of the production tree it also drops is type declarations
# (@escape.tech/graphql-armor-types); test/deploy/docker-compose.test.ts keeps it that way.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force

COPY --from=build /app/dist ./dist
COPY schema.graphql persisted-documents.json ./
# The status board's static files, served as they are at /status.
COPY public ./public

# Files stay owned by root: the app only reads them.
USER node

EXPOSE 4000

# Yoga answers 200 on GET /health. Slim images have no curl: node's fetch does the probe.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

# node directly (not npm) so SIGTERM reaches the app's graceful shutdown.
CMD ["node", "--no-allocation-site-pretenuring", "--no-memory-reducer", "--max-semi-space-size=8", "--max-old-space-size=256", "dist/main.js"]
