#!/usr/bin/env bash
# Assembles the Dockerfile's NODE_IMAGE for machines that reach Debian's and npm's registries but no
# container registry: a Debian bookworm minbase root (debootstrap), the Node binary of the pinned
# `node` dev dependency and npm from the npm registry, committed to buildah's storage as $IMAGE.
# It stands in for node:24-bookworm-slim (same Debian release, Node in /usr/local/bin).
#
#   scripts/image/base.sh IMAGE NODE_BINARY NPM_VERSION   (BUILDAH="buildah --root ..." optional)
set -euo pipefail
image=$1 node_bin=$2 npm_version=$3
buildah=${BUILDAH:-buildah}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

if $buildah inspect --type image "$image" >/dev/null 2>&1; then exit 0; fi
node_version=$("$node_bin" --version)
echo "assembling $image: debian bookworm (minbase) + node $node_version + npm $npm_version"

work=$(mktemp -d)
ctr=$($buildah from scratch)
cleanup() { $buildah umount "$ctr" >/dev/null 2>&1 || true; $buildah rm "$ctr" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
root=$($buildah mount "$ctr")

debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -30 "$work/debootstrap.log"; exit 1; }
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/* \
  "$root"/usr/share/doc "$root"/usr/share/man "$root"/usr/share/info

install -D -m 0755 "$node_bin" "$root/usr/local/bin/node"
(cd "$work" && npm pack --silent "npm@$npm_version" >/dev/null)
mkdir -p "$root/usr/local/lib/node_modules/npm"
tar -xzf "$work"/npm-*.tgz --strip-components=1 -C "$root/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
# The package registries are reached through a proxy whose CA is in this machine's bundle: the build
# stage's npm needs it, and Node reads it through NODE_EXTRA_CA_CERTS.
install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"

$buildah config \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env NODE_VERSION="${node_version#v}" \
  --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
  --cmd node "$ctr"
$buildah umount "$ctr" >/dev/null
$buildah commit --quiet --rm "$ctr" "$image" >/dev/null
ctr=
echo "$image: $($buildah images --format '{{.Size}}' "$image")"
