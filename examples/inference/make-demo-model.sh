#!/bin/bash
# Make the stand-in's demo "model": a directory with a config, a tokenizer
# file and SIZE_MIB of random "weights", so that reading it (and fetching
# it into a node's cache) takes as long as its size says.
# usage: examples/inference/make-demo-model.sh [DIR [SIZE_MIB]]
#        (default /tmp/corral-demo/standin-demo, 256)
set -eu
dir=${1:-/tmp/corral-demo/standin-demo}
mib=${2:-256}
mkdir -p "$dir"
cat >"$dir/config.json" <<JSON
{"architectures": ["CorralStandin"], "model_type": "standin",
 "note": "not a model: weights for corral standin-llm to read"}
JSON
printf '{"version": "1.0", "model": {"type": "WordLevel"}}\n' >"$dir/tokenizer.json"
head -c $((mib * 1024 * 1024)) /dev/urandom >"$dir/model.safetensors"
echo "$dir: $(du -sh "$dir" | cut -f1)"
