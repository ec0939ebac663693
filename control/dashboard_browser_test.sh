#!/bin/bash
# The dashboard in a real headless Chromium against a real `meridian serve`:
# a tenant's job shows on the Overview and Jobs pages once it has succeeded,
# and a second tenant's page shows none of it.
# Usage: dashboard_browser_test.sh MERIDIAN_BINARY OUT_DIR
set -u
bin=$1 out=$2
mkdir -p "$out"
dir=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -x /usr/bin/chromium ] || fail "/usr/bin/chromium is missing (tools/install-deps installs chromium)"
printf 'region: gcp:us-central1\nreconcile_interval_ms: 50\nnode: {name: testnode, gpu_model: T4, gpus: 4, vcpus: 8, ram_gib: 32}\n' > "$dir/serve.yaml"
"$bin" serve --listen 127.0.0.1:0 --db "$dir/d.db" --config "$dir/serve.yaml" > "$dir/serve.log" 2>&1 &
pid=$!
url=
for _ in $(seq 100); do
  url=$(grep -o 'dashboard at http://[0-9.:]*/' "$dir/serve.log" | head -1 | cut -d' ' -f3)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || fail "meridian serve printed no dashboard URL: $(cat "$dir/serve.log")"
alice=$("$bin" token create --db "$dir/d.db" --tenant alice) || fail "token create"
bob=$("$bin" token create --db "$dir/d.db" --tenant bob) || fail "token create"
curl -sf -X POST -H "Authorization: Bearer $alice" -H 'Content-Type: application/json' "${url}v1/jobs" \
  -d '{"name":"alice-echo","kind":"data-science","resources":{"gpus":1,"gpu_models":["T4"]},"command":["/bin/echo","hello"]}' \
  > /dev/null || fail "submit"
for _ in $(seq 100); do
  curl -sf -H "Authorization: Bearer $alice" "${url}v1/jobs" | grep -q '"state":"succeeded"' && break
  sleep 0.1
done
browse() {  # token page file
  timeout 60 /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$dir/profile-$3" --window-size=1280,800 --virtual-time-budget=5000 \
    --dump-dom "${url}#token=$1&page=$2" > "$out/$3.html" 2> "$dir/chromium-$3.log" \
    || fail "chromium did not run: $(tail -5 "$dir/chromium-$3.log")"
}
browse "$alice" overview alice-overview
grep -q 'id="total-jobs">1<' "$out/alice-overview.html" || fail "alice's overview does not count 1 job (see $out/alice-overview.html)"
grep -q '<td>succeeded</td>' "$out/alice-overview.html" || fail "alice's overview shows no succeeded job"
browse "$bob" overview bob-overview
grep -q 'id="total-jobs">0<' "$out/bob-overview.html" || fail "bob's overview does not count 0 jobs (see $out/bob-overview.html)"
grep -q 'alice-echo\|j-00000001' "$out/bob-overview.html" && fail "bob's page shows alice's job"
browse "$alice" jobs alice-jobs
grep -q 'alice-echo' "$out/alice-jobs.html" || fail "alice's jobs page does not list alice-echo (see $out/alice-jobs.html)"
grep -q '<td class="state">succeeded</td>' "$out/alice-jobs.html" || fail "alice's jobs page shows no succeeded job"
# Screenshots of each page at laptop and phone widths, to look at.
for page in overview queue jobs fleet plan; do
  for size in 1280,800 390,844; do
    timeout 60 /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync \
      --user-data-dir="$dir/shot-$page-$size" --window-size=$size --virtual-time-budget=5000 \
      --screenshot="$out/$page-${size/,/x}.png" "${url}#token=$alice&page=$page" > /dev/null 2>&1 \
      || fail "chromium could not take the $page screenshot"
  done
done
echo "PASS"
