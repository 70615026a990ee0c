#!/bin/sh
# Checks the greeting; run by the agent inside the sandbox.
set -eu
grep -q '^hello, world$' hello.txt && echo "check.sh: hello.txt is right"
