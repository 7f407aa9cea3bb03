# What zsh's completion offers, as a user pressing Tab sees it (tests/install/test_install.py):
#   zsh -f zsh_complete.zsh FPATH_DIR WORD... [''] prints the matches for the command line WORD...
# (the last word is the one being completed; '' = a new word), one a line. A zsh in a pseudo-terminal
# (zsh/zpty) loads compinit with FPATH_DIR first on $fpath; compadd is wrapped to print each match
# it is given before adding it.
zmodload zsh/zpty || exit 3
dir=$1; shift
line="${(j: :)@}"
zpty z zsh -f -i
zpty -w z "PS1=''; LISTMAX=100000; fpath=(${(q)dir} \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z 'compadd() { local -a __m; builtin compadd -O __m "$@"; (( $#__m )) && print -rn -- "${(pj:\n:)${(@)__m/#/HISTEQ-MATCH:}}"$'"'\n'"'; builtin compadd "$@"; }'
# compsys calls comppostfuncs once the completion is over: its mark says so (no sleeping).
zpty -w z '__histeq_over() { print -rn -- HISTEQ-OVER; }; comppostfuncs=(__histeq_over)'
zpty -w z 'zstyle ":completion:*" menu no; print HISTEQ-READY'
zpty -r z out '*HISTEQ-READY*HISTEQ-READY*' || exit 4
zpty -w -n z "$line"$'\t'
zpty -r z out '*HISTEQ-OVER*' || exit 5
zpty -w z $'\C-u''print HISTEQ-DONE'
zpty -r z rest '*HISTEQ-DONE*HISTEQ-DONE*' || exit 6
zpty -d z
print -r -- "$out" | tr -d '\r' | grep -o 'HISTEQ-MATCH:[^[:cntrl:]]*' | sed 's/^HISTEQ-MATCH://' | sort -u
