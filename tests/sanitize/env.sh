# Sourced by the sanitizer tests: a finding ends the run with an exit code of its own (86 ASan,
# 87 UBSan: histeq's own codes are 0, 1, 2, 70 and 128 + a signal), with its stack on stderr.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export ASAN_OPTIONS=exitcode=86:detect_leaks=1:protect_shadow_gap=0:check_initialization_order=1:strict_string_checks=1
export UBSAN_OPTIONS=halt_on_error=1:exitcode=87:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$here/lsan.supp:print_suppressions=0
