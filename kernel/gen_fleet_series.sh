#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Generate the header behind /sys/kernel/fleet (kernel/fleet.c) on stdout.
#
# Arguments: BASE SERIES PATCHDIR
#
# BASE is the base source version, SERIES a quilt series file and PATCHDIR the
# directory its patch names are relative to. Each patch's status is its
# "Upstream-Status:" header line. Without a series (a tree built outside the
# Fleet pipeline) the base reads "unknown" and the list is empty.

base=${1:-unknown}
series=$2
patchdir=$3

c_string() {
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g'
}

printf '/* Generated from the Fleet series at build time; do not edit. */\n'
printf '#define FLEET_BASE "%s"\n' "$(printf '%s' "$base" | c_string)"
printf '#define FLEET_PATCHES \\\n'
if [ -n "$series" ] && [ -r "$series" ]; then
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$series" | while read -r patch rest; do
		status=$(sed -n -e '/^---$/q' \
			-e 's/^Upstream-Status:[[:space:]]*//p' "$patchdir/$patch" 2>/dev/null |
			head -n 1)
		printf '\t"%s %s\\n" \\\n' "$(printf '%s' "$patch" | c_string)" \
			"$(printf '%s' "${status:-unknown}" | c_string)"
	done
fi
printf '\t""\n'
