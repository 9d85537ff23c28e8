# Sourced by scripts/test and .ci/run: the Debian packages the tests need, installed when missing.
# openssl: the web_fetch TLS test makes a throwaway certificate; postgresql: the store tests start their own
# server from its binaries; nodejs and npm: the official TypeScript client of the HTTP API (tests/support/clients);
# curl and jq: the docs' curl walk-through (tests/http/test_curl_walkthrough.py); chromium: the dashboard's
# browser tests (Playwright drives Debian's Chromium, no browser download).
missing=()
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null && ! command -v initdb >/dev/null 2>&1; then
    missing+=(postgresql)
fi
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v jq >/dev/null 2>&1 || missing+=(jq)
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "the tests need these Debian packages: ${missing[*]} (sudo apt-get install ${missing[*]})" >&2
        exit 1
    fi
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
