#!/bin/sh
# Regenerates output/*.txt: the standard output of TLC on the toy specs in
# toy/, which the parser tests read. Needs KCHECK_TLA2TOOLS (the jar) and java.
# Usage: sh capture.sh   (from checker/tlc/testdata)
set -u
cd "$(dirname "$0")/toy" || exit 1
meta=$(mktemp -d)
trap 'rm -rf "$meta"' EXIT
tlc() { # name config module [flags]
	name=$1 cfg=$2 mod=$3
	shift 3
	java -XX:+UseParallelGC -Djava.io.tmpdir="$meta" -cp "$KCHECK_TLA2TOOLS" tlc2.TLC \
		-workers 1 "$@" -cleanup -metadir "$meta/$name" -config "$cfg" "$mod" >"../output/$name.txt"
	echo "$name: exit status $?"
}
tlc pass pass.cfg Toy.tla -deadlock
tlc invariant invariant.cfg Toy.tla -deadlock
tlc initial initial.cfg Toy.tla -deadlock
tlc lasso lasso.cfg Toy.tla -deadlock
tlc stutter stutter.cfg Toy.tla -deadlock
tlc terminal terminal.cfg Toy.tla -deadlock
tlc deadlock terminal.cfg Toy.tla
tlc undefined undefined.cfg Toy.tla -deadlock
tlc postcondition postcondition.cfg Toy.tla -deadlock
tlc missing_config missing.cfg Toy.tla -deadlock
tlc parse init_next.cfg Parse.tla -deadlock
tlc semantic init_next.cfg Semantic.tla -deadlock
tlc eval eval.cfg Eval.tla -deadlock
