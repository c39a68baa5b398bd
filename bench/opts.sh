# shellcheck shell=bash
# bench/opts.sh - how the scripts of bench/ take their options; sourced
# before their getopts loop (bench/common.sh, which wants a build, comes
# after). The script sets $usage first.

# usage_error MESSAGE: "SCRIPT: MESSAGE" and the usage on stderr, exit 2.
usage_error() {
	echo "${0##*/}: $1" >&2
	# shellcheck disable=SC2154 # the script's
	echo "$usage" >&2
	exit 2
}

# other_option OPT: what getopts gave for OPT that the script has no arm
# of its own for: -h (the usage, exit 0), -k DIR (keep=DIR, for common.sh's
# runs_dir), and getopts' complaints as usage errors: ':' (-$OPTARG wants a
# value) and '?' (-$OPTARG is unknown).
# shellcheck disable=SC2034 # keep: common.sh's runs_dir reads it
other_option() {
	case $1 in
	h) echo "$usage"; exit 0 ;;
	k) keep=$OPTARG ;;
	:) usage_error "option '-$OPTARG' needs a value" ;;
	*) usage_error "unknown option '-$OPTARG'" ;;
	esac
}

# no_arguments "${@:OPTIND}": a usage error for what is left after the
# options.
no_arguments() {
	[ $# -eq 0 ] || usage_error "unexpected argument '$1'"
}

# whole_numbers VALUE...: for the first that is not a whole number, says so
# and exits 2.
whole_numbers() {
	local v
	for v; do
		case $v in '' | *[!0-9]*) echo "${0##*/}: '$v' is not a whole number" >&2; exit 2 ;; esac
	done
}
