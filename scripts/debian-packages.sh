# Shared by the *-local.sh scripts (sourced, not run). The caller defines `say` and PACKAGES.

# `until_true SECONDS COMMAND...`: retry COMMAND every half second; false after SECONDS.
until_true() {
    local deadline=$((SECONDS + $1)); shift
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -ge "$deadline" ] && return 1
        sleep 0.5
    done
}

# Install what of PACKAGES is missing; exit 3 when they cannot be installed here.
install_packages() {
    local missing=()
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
            || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    command -v apt-get >/dev/null || { say "no apt-get: install ${missing[*]} by hand"; exit 3; }
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    timeout 300 apt-get update -q >/dev/null || { say "apt-get update failed"; exit 3; }
    # Installing must not start daemons through init scripts; the calling script starts them.
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
    if ! timeout 900 apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; then
        rm -f /usr/sbin/policy-rc.d
        say "apt-get install ${missing[*]} failed"; exit 3
    fi
    rm -f /usr/sbin/policy-rc.d
}
