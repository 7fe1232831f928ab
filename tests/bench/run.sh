#!/usr/bin/env bash
# make bench: every benchmark in this directory, one after the other.
cd "$(dirname "$0")" || exit 1
for b in cold-view.sh refresh.sh warm-read.sh scale.sh local-index.sh overview.sh imap-deliver.sh series.sh many-views.sh; do
	echo "== $b"
	bash "$b"
done
