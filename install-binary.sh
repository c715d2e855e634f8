#!/bin/sh
# Install hook of the Helm plugin (plugin.yaml `hooks`): a git-URL install
# (`helm plugin install https://github.com/...`) brings the sources only, so
# this fetches the release archive of the plugin.yaml version for this
# platform, checks its sha256 against the release's checksums.txt and puts
# the binary at $HELM_PLUGIN_DIR/bin/kubectl-gitops_preflight. Needs sh,
# curl or wget, tar, and sha256sum or shasum; not Go.
#
#   GITOPS_PREFLIGHT_RELEASE_URL  base URL of the releases (default: the
#                                 project's GitHub releases); the files are
#                                 $GITOPS_PREFLIGHT_RELEASE_URL/v<version>/...
#
# --force replaces a binary already there (the update hook).
set -eu

repo_releases=https://github.com/gitops-preflight/kubectl-gitops-preflight/releases
base=${GITOPS_PREFLIGHT_RELEASE_URL:-$repo_releases/download}
dir=${HELM_PLUGIN_DIR:-$(dirname -- "$0")}
bin=$dir/bin/kubectl-gitops_preflight

fail() {
	echo "gitops-preflight install hook: $*" >&2
	echo "Install a release archive instead (no Go needed): helm plugin install $repo_releases/download/v<version>/kubectl-gitops_preflight_v<version>_<os>_<arch>.tar.gz" >&2
	echo "or build the binary in a checkout (Go needed): make build, then helm plugin install <checkout>." >&2
	exit 1
}

if [ -x "$bin" ] && [ "${1:-}" != "--force" ]; then
	exit 0
fi

version=$(sed -n 's/^version:[[:space:]]*"\{0,1\}\([^"[:space:]]*\)"\{0,1\}[[:space:]]*$/\1/p' "$dir/plugin.yaml" | head -n 1)
[ -n "$version" ] || fail "no version in $dir/plugin.yaml"
tag=v$version

case $(uname -s) in
Linux) os=linux ;;
Darwin) os=darwin ;;
*) fail "no release archive for $(uname -s) that this hook can unpack (Windows: use the kubectl plugin, kubectl krew install gitops-preflight)" ;;
esac
case $(uname -m) in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) fail "no release archive for the $(uname -m) architecture" ;;
esac

name=kubectl-gitops_preflight_${tag}_${os}_${arch}.tar.gz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fetch() {
	if command -v curl >/dev/null 2>&1; then
		curl -fsSL --retry 2 -o "$2" "$1"
	elif command -v wget >/dev/null 2>&1; then
		wget -q -O "$2" "$1"
	else
		fail "neither curl nor wget is installed"
	fi
}

fetch "$base/$tag/checksums.txt" "$tmp/checksums.txt" ||
	fail "cannot download $base/$tag/checksums.txt (is $tag released? plugin.yaml says version $version)"
fetch "$base/$tag/$name" "$tmp/$name" || fail "cannot download $base/$tag/$name"

want=$(awk -v n="$name" '$2 == n { print $1 }' "$tmp/checksums.txt")
[ -n "$want" ] || fail "checksums.txt of $tag lists no $name"
if command -v sha256sum >/dev/null 2>&1; then
	got=$(sha256sum "$tmp/$name" | awk '{ print $1 }')
elif command -v shasum >/dev/null 2>&1; then
	got=$(shasum -a 256 "$tmp/$name" | awk '{ print $1 }')
else
	fail "neither sha256sum nor shasum is installed: cannot verify $name"
fi
[ "$got" = "$want" ] || fail "$name has sha256 $got, checksums.txt says $want: not installed"

mkdir -p "$tmp/x" "$dir/bin"
tar -xzf "$tmp/$name" -C "$tmp/x" bin/kubectl-gitops_preflight || fail "$name has no bin/kubectl-gitops_preflight"
mv "$tmp/x/bin/kubectl-gitops_preflight" "$bin"
chmod 0755 "$bin"
echo "gitops-preflight: installed $name (sha256 verified) from $base/$tag"
