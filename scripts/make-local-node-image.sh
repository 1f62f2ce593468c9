#!/bin/sh
# Makes a local image tagged node:24-slim, for building the Dockerfiles on a machine whose Docker
# engine cannot pull from a registry: a minimal Debian (debootstrap, from the Debian mirror apt
# already uses, or $DEBIAN_MIRROR), the Node 24 binary of the `node` devDependency, npm, and the
# `node` user (uid 1000) the images run as, as the official image has them. The official image is
# what the Dockerfiles are written for; this one only stands in for it.
#
#   sudo scripts/make-local-node-image.sh [tag]     # default tag: node:24-slim
#
# Needs: debootstrap, docker, and `npm ci` run here (node_modules/node). npm is taken from
# $NPM_DIR, or from the global npm beside the npm on PATH. Behind a proxy that re-signs TLS, set
# $CA_CERTS to a PEM bundle that holds its CA: the image then trusts it (NODE_EXTRA_CA_CERTS), so
# that `npm ci` in the Dockerfiles reaches the npm registry.
set -eu

TAG=${1:-node:24-slim}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SUITE=${DEBIAN_SUITE:-bookworm}

NODE_BIN=$(readlink -f "$ROOT/node_modules/node/bin/node")
[ -x "$NODE_BIN" ] || { echo "no Node binary at node_modules/node/bin/node: run npm ci" >&2; exit 1; }
case $("$NODE_BIN" --version) in
  v24.*) ;;
  *) echo "node_modules/node/bin/node is not Node 24" >&2; exit 1 ;;
esac
NPM_DIR=${NPM_DIR:-$(npm root -g)/npm}
[ -f "$NPM_DIR/bin/npm-cli.js" ] || { echo "no npm at $NPM_DIR (set NPM_DIR)" >&2; exit 1; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ROOTFS=$WORK/rootfs

# shellcheck disable=SC2086 # an unset mirror must be no argument at all
debootstrap --variant=minbase "$SUITE" "$ROOTFS" ${DEBIAN_MIRROR:-}

install -m 0755 "$NODE_BIN" "$ROOTFS/usr/local/bin/node"
mkdir -p "$ROOTFS/usr/local/lib/node_modules"
cp -a "$NPM_DIR" "$ROOTFS/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
chroot "$ROOTFS" groupadd --gid 1000 node
chroot "$ROOTFS" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
CA_CHANGE='ENV NODE_EXTRA_CA_CERTS='
if [ -n "${CA_CERTS:-}" ]; then
  mkdir -p "$ROOTFS/etc/ssl/certs"
  install -m 0644 "$CA_CERTS" "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
  CA_CHANGE='ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt'
fi
# What a minimal image does not need: apt's lists and caches, documentation.
rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/* "$ROOTFS"/usr/share/doc/* \
  "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/*

tar -C "$ROOTFS" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_VERSION='"$("$NODE_BIN" --version | cut -c2-)" \
  --change "$CA_CHANGE" \
  --change 'CMD ["node"]' \
  - "$TAG"
docker run --rm "$TAG" sh -c 'node --version && npm --version && id node'
