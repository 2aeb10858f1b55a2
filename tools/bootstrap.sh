#!/usr/bin/env bash
# Installs what vigil needs to build and test on Debian 12, and nothing that is already
# there. Idempotent; needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libseccomp-dev libboost1.81-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev
  libcli11-dev bubblewrap python3 curl procps util-linux passwd openssl netcat-openbsd nodejs
  chromium
  # a FUSE filesystem, for the odd-host-mounts test (a FUSE mount every sandbox carries)
  bindfs
  # cargo and rustc (Debian's), for the learn test's cargo session (a crate with no
  # dependencies, built with --offline: no network)
  cargo
  # vigil export --follow: syslog over TLS (OpenSSL through Boost.Asio), and the fleet
  # integration test's real collector (rsyslogd with its OpenSSL stream driver)
  libssl-dev rsyslog rsyslog-openssl
  # ssh, sshd and git over ssh with vigil.network.capture (tests/integration/
  # net_capture_programs_test.cc starts its own sshd on loopback, as the test's user)
  openssh-client openssh-server
  # pip and setuptools: the clients' README examples install clients/python as a user
  # would (offline: it has no dependencies)
  python3-pip python3-setuptools
  # the libFuzzer targets (tools/fuzz.sh): clang, and libFuzzer + the sanitizer runtimes
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# npm (the "day of agent work" integration test runs npm init and npm test): Debian's
# package, unless a nodejs that bundles its own npm (NodeSource's, which conflicts with it)
# already gives one.
if ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo="sudo"
    else
      echo "bootstrap: missing packages (${missing[*]}) and not root; install them as root" >&2
      exit 1
    fi
  fi
  $sudo apt-get update -qq
  # Nothing starts because vigil's tests were set up: Debian starts a service as its
  # package is installed (sshd on port 22, rsyslogd), and the tests start their own, on
  # loopback. invoke-rc.d asks policy-rc.d first; one that says 101 ("not now") is put in
  # place for the install (unless the machine has its own, as containers do) and removed.
  policy=/usr/sbin/policy-rc.d
  own_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# bootstrap.sh: no service starts while it installs packages\nexit 101\n' |
      $sudo tee "$policy" >/dev/null
    $sudo chmod 755 "$policy"
    own_policy=1
    trap '$sudo rm -f "$policy"' EXIT
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [ "$own_policy" = 1 ]; then
    $sudo rm -f "$policy"
    trap - EXIT
  fi
  # Nor at the next boot: the sshd this run installed stays off (the tests need its binary).
  if [[ " ${missing[*]} " == *" openssh-server "* ]] && command -v systemctl >/dev/null 2>&1; then
    $sudo systemctl disable ssh.service ssh.socket >/dev/null 2>&1 || true
  fi
fi

# The official MCP TypeScript SDK's client, for tests/integration/mcp_sdk_test.cc: the
# version and every dependency pinned by tests/clients/mcp-sdk/package-lock.json, from the
# npm registry (`npm ci`: exactly the lock, no install scripts run). Again only when what is
# installed is not what the lock says (npm writes its own copy of the lock into
# node_modules/.package-lock.json).
sdk="$(cd "$(dirname "$0")/.." && pwd)/tests/clients/mcp-sdk"
if ! cmp -s <(sed -n '/"packages"/,$p' "$sdk/package-lock.json" | grep -E '"(resolved|integrity)"' | sort) \
            <(sed -n '/"packages"/,$p' "$sdk/node_modules/.package-lock.json" 2>/dev/null | grep -E '"(resolved|integrity)"' | sort); then
  echo "bootstrap: npm ci in tests/clients/mcp-sdk (the MCP SDK client for the tests)" >&2
  (cd "$sdk" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) || {
    echo "bootstrap: npm ci in $sdk failed (the npm registry must be reachable)" >&2
    exit 1
  }
fi
