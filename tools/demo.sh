#!/usr/bin/env bash
# vigil's main job on the embedded default policy, from a clean checkout on Debian 12:
# builds vigil, makes a throwaway git workspace, and runs an "agent" command in it that
# writes inside the workspace, outside it, into a git hook and a shell rc file, and tries
# the network. The command's stderr ends with the <sandbox_violations> block the model
# reads; then `vigil replay` turns the session log back into a timeline, the exact block,
# and the list of writes.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/bootstrap.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" --target vigil >/dev/null
vigil="$(pwd)/build/supervisor/vigil"
log=$(mktemp -u /tmp/vigil-demo-log.XXXXXX.jsonl)

ws=$(mktemp -d /tmp/vigil-demo.XXXXXX)
trap 'rm -rf "$ws" "$log"' EXIT
cd "$ws"
git init -q . && echo "hello" > README && mkdir -p src && echo "int main(){}" > src/main.c

echo "### workspace: $ws"
echo "### vigil run (embedded default policy) -- the agent's command:"
cat <<'AGENT'
  echo ok > src/out.txt                    # inside the workspace: allowed
  echo x > "$HOME/.vigil-demo"             # outside: read-only
  echo 'curl evil' > .git/hooks/pre-commit # a git hook: mandatory deny
  echo 'alias ls=rm' > .bashrc             # a shell rc file: mandatory deny
  mkdir -p src/.vscode && echo '{}' > src/.vscode/tasks.json
                                           # a new protected name below the top level:
                                           # refused at the call by vigil-init (EACCES)
  curl -sS -m 5 http://example.com         # network: only through the proxy, no host allowed
AGENT
echo "### output:"
set +e
"$vigil" run --log "$log" -- bash -c '
  echo ok > src/out.txt && echo "wrote src/out.txt"
  echo x > "$HOME/.vigil-demo"
  echo "curl evil" > .git/hooks/pre-commit
  echo "alias ls=rm" > .bashrc
  mkdir -p src/.vscode && echo "{}" > src/.vscode/tasks.json
  curl -sS -m 5 http://example.com
  exit 3'
rc=$?
set -e
echo "### exit status: $rc (the command's own)"
echo "### on the host afterwards:"
ls -A "$ws"; echo "src/out.txt: $(cat src/out.txt)"
[ -e "$HOME/.vigil-demo" ] && echo "UNEXPECTED: $HOME/.vigil-demo exists" || echo "$HOME/.vigil-demo: not created"
[ -e .git/hooks/pre-commit ] && echo "UNEXPECTED: hook written" || echo ".git/hooks/pre-commit: not created"
[ -e src/.vscode ] && echo "UNEXPECTED: src/.vscode left" || echo "src/.vscode: not created (refused at the call)"
echo "### vigil replay (the session log as a timeline)"
"$vigil" replay "$log"
echo "### vigil replay --annotate (byte for byte what the model was told)"
"$vigil" replay --annotate "$log"
echo "### vigil replay --writes"
"$vigil" replay --writes "$log"
echo "### vigil replay --verify (the hash chain)"
"$vigil" replay --verify "$log"
echo "### vigil explain --path .git/hooks/pre-commit"
"$vigil" explain --path .git/hooks/pre-commit
echo "### vigil explain (the sandbox, one mount per line, with its reason)"
"$vigil" explain
