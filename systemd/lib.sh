# shellcheck shell=bash
# What install.sh and install-floor.sh share: their output, the dry run, the
# wheel or checkout to install, a venv per version behind a symlink, the docs.
# Sourced by both, never run. The installer sets, before calling these:
# DRY_RUN, ROOT (--root), REPO (the checkout), WHEEL, WHEELHOUSE, PYTHON,
# EXTRAS, and once the root is known PREFIX, VENVS, CURRENT and INSTALLED; FILE_OWNER
# (OWNER:GROUP) when every file it copies must have that owner.

die() { printf '%s: %s\n' "${0##*/}" "$*" >&2; exit 1; }
say() { printf '==> %s\n' "$*"; }

# Run a command, or only show it with --dry-run.
run() {
    if ((DRY_RUN)); then
        local arg
        printf '+'
        for arg in "$@"; do
            # Quote only what a shell would misread, so the log stays legible.
            if [[ $arg =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then printf ' %s' "$arg"
            else printf ' %q' "$arg"; fi
        done
        printf '\n'
    else
        "$@"
    fi
}

# Copy SRC to DEST with MODE (and OWNER:GROUP, default FILE_OWNER's, else the
# installer's own) unless DEST already has the same bytes; true when copied.
# Never a moment with a wider mode.
install_file() {
    local src=$1 dest=$2 mode=$3 owner=${4:-${FILE_OWNER:-}}
    if [[ -f $dest ]] && cmp -s "$src" "$dest"; then
        say "$dest is up to date"
        return 1
    fi
    if [[ -n $owner ]]; then
        run install -D -o "${owner%%:*}" -g "${owner##*:}" -m "$mode" "$src" "$dest"
    else
        run install -D -m "$mode" "$src" "$dest"
    fi
}

# ROOT made absolute, and R: the prefix of every path written, empty for the real root.
resolve_root() {
    [[ -d $ROOT ]] || die "--root $ROOT is not a directory"
    ROOT=$(cd "$ROOT" && pwd)
    R=${ROOT%/}
}

# Say what kind of run this is: a dry run, under a fake root.
announce_run() {
    if ((DRY_RUN)); then say "dry run: nothing will be changed"; fi
    if [[ -n $R ]]; then say "root: $ROOT"; fi
}

# SOURCE (the wheel, else the checkout) and VERSION: what to install. WHEEL
# defaults to the newest dealerbox wheel of WHEELHOUSE.
choose_source() {
    local line
    if [[ -z $WHEEL && -n $WHEELHOUSE ]]; then
        WHEEL=$(find "$WHEELHOUSE" -maxdepth 1 -name 'dealerbox-*.whl' | sort -V | tail -n 1)
        [[ -n $WHEEL ]] || die "no dealerbox wheel in $WHEELHOUSE (make wheelhouse puts one there)"
    fi
    if [[ -n $WHEEL ]]; then
        [[ -f $WHEEL ]] || die "no wheel at $WHEEL"
        WHEEL=$(cd "$(dirname "$WHEEL")" && pwd)/$(basename "$WHEEL")
        SOURCE=$WHEEL
        VERSION=${WHEEL##*/dealerbox-}   # dealerbox-VERSION-py3-none-any.whl
        VERSION=${VERSION%%-*}
    else
        SOURCE=$REPO
        VERSION=
        while IFS= read -r line; do
            if [[ $line =~ ^version\ =\ \"([^\"]+)\" ]]; then VERSION=${BASH_REMATCH[1]}; break; fi
        done <"$REPO/pyproject.toml"
    fi
    [[ $VERSION =~ ^[0-9A-Za-z.+_]+$ ]] || die "cannot tell the version of $SOURCE"
}

# The version the CURRENT symlink points at, or nothing.
current_version() {
    local target
    target=$(readlink "$CURRENT" 2>/dev/null) || return 0
    [[ -x $CURRENT/bin/dealerbox ]] && basename "$target"
}

# pip install with INTERPRETER (a venv's python), from WHEELHOUSE alone when there is one.
pip_install() {
    local interpreter=$1; shift
    local offline=()
    [[ -n $WHEELHOUSE ]] && offline=(--no-index --find-links "$WHEELHOUSE")
    run "$interpreter" -m pip install --quiet --disable-pip-version-check "${offline[@]}" "$@"
}
with_extras() { if [[ -n $2 ]]; then printf '%s[%s]' "$1" "$2"; else printf '%s' "$1"; fi; }

# NEW: a fresh venv of VERSION in VENVS with SOURCE and EXTRAS installed, not yet in use.
make_venv() {
    NEW=$VENVS/$VERSION
    say "virtual environment $NEW with extras [$EXTRAS]"
    # A venv of this version that is not in use is what a failed attempt left.
    if [[ -e $NEW ]]; then run rm -rf "$NEW"; fi
    run install -d -m 0755 "$VENVS"
    run "$PYTHON" -m venv "$NEW"
    pip_install "$NEW/bin/python" "$(with_extras "$SOURCE" "$EXTRAS")"
}

# Put the venv of VERSION in use (CURRENT) and drop all but it and INSTALLED's.
switch_venv() {
    local old name
    # Switch in one rename, so the units never see a half-made venv. (A real
    # directory there is the venv of an installer from before venvs/.)
    if [[ -d $CURRENT && ! -L $CURRENT ]]; then run rm -rf "$CURRENT"; fi
    run ln -sfn "venvs/$VERSION" "$CURRENT.new"
    run mv -T "$CURRENT.new" "$CURRENT"
    # Keep the version just replaced for a manual rollback; older ones go.
    if ((!DRY_RUN)); then
        for old in "$VENVS"/*; do
            name=$(basename "$old")
            [[ $name == "$VERSION" || $name == "$INSTALLED" ]] && continue
            run rm -rf "$old"
        done
    fi
}

# The README and the guides, beside the code in PREFIX.
install_docs() {
    local doc
    install_file "$REPO/README.md" "$PREFIX/README.md" 0644 || true
    # docs/floor/ too: the floor's manual, whose pages the floor's units name as Documentation=.
    for doc in "$REPO"/docs/*.md "$REPO"/docs/floor/*.md; do
        if [[ -f $doc ]]; then install_file "$doc" "$PREFIX/docs/${doc#"$REPO"/docs/}" 0644 || true; fi
    done
}
