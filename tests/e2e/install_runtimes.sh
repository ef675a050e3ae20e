#!/usr/bin/env bash
# Install the real runtime CLIs (Claude Code, Codex CLI) for the end-to-end tests.
#
# Each CLI goes from the npm registry, at a pinned version, into its own folder of a cache
# OUTSIDE the checkout, keyed by version:
#
#   ${ALP_RUNTIMES_CACHE:-$HOME/.cache/alp-runtimes}/claude-code-2.1.328/
#   ${ALP_RUNTIMES_CACHE:-$HOME/.cache/alp-runtimes}/codex-0.169.0/
#
# A folder counts as installed only when it holds the marker file `.alp-installed`, which is
# written after `npm install` succeeded AND the binary answered `--version` with the pinned
# version. The install happens in a scratch folder that is renamed into place, so an
# interrupted run never leaves a half-installed folder that looks complete. A second run finds
# the markers and downloads nothing. Runs are serialised with flock so two `make test` at once
# do not race. tests/e2e/runtimes.py applies the same path rule from Python.
#
# Exit status: 0 with both binaries ready (their paths are printed); non-zero with a message
# naming what is missing or what failed.
set -euo pipefail

CLAUDE_VERSION=2.1.328
CODEX_VERSION=0.169.0
CACHE="${ALP_RUNTIMES_CACHE:-$HOME/.cache/alp-runtimes}"

die() {
    echo "install_runtimes.sh: ERROR: $*" >&2
    exit 1
}

command -v npm >/dev/null 2>&1 || die "npm is not on PATH; install Node.js >= 18 with npm (e.g. apt-get install nodejs npm) and re-run"
command -v node >/dev/null 2>&1 || die "node is not on PATH; install Node.js >= 18 and re-run"

mkdir -p "$CACHE"
exec 9>"$CACHE/.install.lock"
if command -v flock >/dev/null 2>&1; then
    flock 9
fi

# install_one NAME PACKAGE VERSION BIN: install PACKAGE@VERSION into $CACHE/NAME-VERSION and
# check that node_modules/.bin/BIN --version mentions VERSION.
install_one() {
    local name=$1 package=$2 version=$3 bin=$4
    local dest="$CACHE/$name-$version"
    local binary="$dest/node_modules/.bin/$bin"
    if [[ -f "$dest/.alp-installed" && -x "$binary" ]]; then
        echo "$name $version: cached at $dest" >&2
        return 0
    fi
    local scratch
    scratch="$(mktemp -d "$CACHE/.$name-$version.XXXXXX")"
    chmod 0755 "$scratch"
    echo "$name $version: installing $package@$version from the npm registry into $dest ..." >&2
    if ! npm install --prefix "$scratch" --no-audit --no-fund --no-save --loglevel=error \
        "$package@$version" >&2; then
        rm -rf "$scratch"
        die "npm install $package@$version failed (see npm's output above)"
    fi
    local reported
    if ! reported="$("$scratch/node_modules/.bin/$bin" --version </dev/null 2>&1)"; then
        rm -rf "$scratch"
        die "$package@$version installed but '$bin --version' failed: $reported"
    fi
    if [[ "$reported" != *"$version"* ]]; then
        rm -rf "$scratch"
        die "$package@$version installed but '$bin --version' says '$reported'"
    fi
    rm -rf "$dest"
    mv "$scratch" "$dest"
    # .bin links are relative, so they survive the rename; check once more from the final place.
    "$binary" --version </dev/null >/dev/null 2>&1 || die "$binary does not run after the move"
    printf '%s\n' "$reported" >"$dest/.alp-installed"
    echo "$name $version: installed ($reported)" >&2
}

install_one claude-code @anthropic-ai/claude-code "$CLAUDE_VERSION" claude
install_one codex @openai/codex "$CODEX_VERSION" codex

echo "claude: $CACHE/claude-code-$CLAUDE_VERSION/node_modules/.bin/claude"
echo "codex: $CACHE/codex-$CODEX_VERSION/node_modules/.bin/codex"
