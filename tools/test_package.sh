#!/usr/bin/env bash
# The .deb, installed and working: unpacked into a clean tree (dpkg -x: nothing of the host
# changes), then, as an unprivileged user, `vigil doctor` and `vigil run -- true` from the
# installed paths (vigil finds vigil-init in ../libexec/vigil/). Run as root from
# tools/test.sh: tools/test_package.sh DEB [USER].
set -euo pipefail
deb=$1
user=${2:-vigil-ci}
tree=$(mktemp -d /tmp/vigil-pkg.XXXXXX)
trap 'rm -rf "$tree"' EXIT
# Read whole first: `grep -q` stopping early would SIGPIPE dpkg-deb and, with pipefail,
# fail the check at random.
info=$(dpkg-deb --info "$deb")
grep -q "Depends: .*bubblewrap" <<<"$info" || { echo "FAIL: no bubblewrap dependency"; exit 1; }
dpkg -x "$deb" "$tree"
# Every man page written in docs/man/ (one per subcommand), the binaries, the completions.
pages=()
for m in "$(dirname "$0")"/../docs/man/*.1; do pages+=("usr/share/man/man1/$(basename "$m")"); done
for f in usr/bin/vigil usr/libexec/vigil/vigil-init usr/libexec/vigil/vigil-export \
         usr/libexec/vigil/vigil-tls "${pages[@]}" \
         usr/share/bash-completion/completions/vigil usr/share/zsh/vendor-completions/_vigil; do
  [ -e "$tree/$f" ] || { echo "FAIL: the package has no $f"; exit 1; }
done
chmod 755 "$tree"
mkdir -p "$tree/home" "$tree/work"
chown "$user" "$tree/home" "$tree/work"
as_user() {
  (cd "$tree/work" && runuser -u "$user" -- env -i PATH=/usr/bin:/bin HOME="$tree/home" "$@")
}
as_user "$tree/usr/bin/vigil" doctor || { echo "FAIL: vigil doctor from the package"; exit 1; }
as_user "$tree/usr/bin/vigil" run -- true || { echo "FAIL: vigil run -- true from the package"; exit 1; }
out=$(as_user "$tree/usr/bin/vigil" run -- sh -c 'echo installed-ok')
[ "$out" = installed-ok ] || { echo "FAIL: unexpected output: $out"; exit 1; }
# A masked credential starts libexec/vigil/vigil-tls: the command sees the sentinel only.
printf '%s\n' '{"network": {"allowedDomains": ["localhost"], "tlsTerminate": {}},' \
  '"credentials": {"envVars": [{"name": "PKG_SECRET", "mode": "mask", "injectHosts": ["localhost"]}]}}' \
  >"$tree/creds.json"
chmod 644 "$tree/creds.json"
out=$(as_user env PKG_SECRET=pkg-real-value "$tree/usr/bin/vigil" run --settings "$tree/creds.json" -- \
  sh -c 'printf %s "$PKG_SECRET"') || { echo "FAIL: vigil run with a masked credential from the package"; exit 1; }
case "$out" in
  *pkg-real-value*) echo "FAIL: the real value reached the command"; exit 1 ;;
  "") echo "FAIL: the command saw no sentinel"; exit 1 ;;
esac
# export --follow runs libexec/vigil/vigil-export: the session above arrives in the file.
as_user "$tree/usr/bin/vigil" export --follow --until-idle --format vigil --to "$tree/work/out.jsonl" ||
  { echo "FAIL: vigil export --follow from the package"; exit 1; }
grep -q '"kind":"session.end"' "$tree/work/out.jsonl" ||
  { echo "FAIL: vigil export --follow from the package sent no session.end"; exit 1; }
echo "package OK: $deb"
