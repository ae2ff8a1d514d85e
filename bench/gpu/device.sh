#!/usr/bin/env bash
# The GPU calibration of the per-lane noise floor, in steps run on the device machine (the
# device tool runs this from the repository root). bench/gpu/README.md gives the order of the
# calls and what each carries. Everything lands under /tmp on the machine; `collect` packs the
# runs into $OUT.
set -uo pipefail
step=${1:?step}
G=/tmp/gpu
mkdir -p $G
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
case $step in
build-start)
  # llama.cpp's server with CUDA for Hopper (sm_90) from the source xllamacpp vendors; the
  # options turn off what would fetch from the network at configure time.
  rm -rf /tmp/llama-src && mkdir -p /tmp/llama-src && tar xJf .gpu/src/llama.cpp.tar.xz -C /tmp/llama-src
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $G/gpu.txt
  nvcc --version | tail -2 >> $G/gpu.txt
  setsid bash -c "
    start=\$(date +%s)
    cmake -S /tmp/llama-src/llama.cpp -B /tmp/llama-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF \
      -DLLAMA_LLGUIDANCE=OFF -DLLAMA_BUILD_BORINGSSL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
      -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DGGML_CUDA_NCCL=OFF \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF > $G/build.log 2>&1 &&
    cmake --build /tmp/llama-build --target llama-server -j 16 >> $G/build.log 2>&1 &&
    mkdir -p /tmp/llama/bin && cp /tmp/llama-build/bin/llama-server /tmp/llama/bin/ &&
    echo \$(( \$(date +%s) - start )) > $G/build.seconds
    echo \$? > $G/build.rc" > /dev/null 2>&1 < /dev/null &
  ;;
install)
  # evalrun's dependencies that the device image lacks, as cp312 wheels (bench/gpu/prepare.sh).
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .gpu/whl*/*.whl && echo "installed $(ls .gpu/whl*/ | wc -l) wheels"
  ;;
gguf)
  # The reference GGUF travels in two halves (one call carries at most 64 MiB).
  mkdir -p /tmp/model && cp .gpu/gguf*/part* /tmp/model/ 2>/dev/null
  if [ -f /tmp/model/part00 ] && [ -f /tmp/model/part01 ]; then
    cat /tmp/model/part00 /tmp/model/part01 > /tmp/model/SmolLM2-135M-Instruct.Q4_1.gguf
    (cd /tmp/model && sha256sum SmolLM2-135M-Instruct.Q4_1.gguf)
  fi
  ;;
wait-build)
  # Wait for the build started by build-start, up to ${2:-540} seconds.
  for _ in $(seq "${2:-540}"); do [ -f $G/build.rc ] && break; sleep 1; done
  tail -3 $G/build.log; cat $G/build.rc $G/build.seconds 2>/dev/null
  ;;
runs|runs-floor)
  # Scored runs with token traces and bisects (bench/gpu/runs.py names the settings); every
  # run boots its own server. Runs already stored are skipped, so a list cut off by the call's
  # limit goes on in the next call. runs-floor runs them with the evalrun carried in
  # .gpu/floor (a branch's code, `git archive BRANCH evalrun bisect suites`), into its own store.
  results=$G/results
  if [ "$step" = runs-floor ]; then
    export PYTHONPATH=/tmp/site:$PWD/.gpu/floor results=$G/results-floor
  fi
  shift
  python3 bench/gpu/runs.py --results $results "$@"
  ;;
collect)
  mkdir -p "$OUT"
  cp $G/gpu.txt $G/build.log $G/build.seconds "$OUT"/ 2>/dev/null
  tar czf "$OUT/results.tgz" -C $G --exclude='*.lock' --exclude='bisect-cache' results results-floor 2>/dev/null
  ls -la "$OUT"
  ;;
esac
